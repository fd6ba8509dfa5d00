import { Token } from '@lumino/coreutils';
import type { ISignal } from '@lumino/signaling';
import type { NotebookPanel } from '@jupyterlab/notebook';

/** A JSON value, as the probe and the server return them. */
export type JSONPrimitive = string | number | boolean | null;
export type JSONValue =
  JSONPrimitive | JSONValue[] | { [key: string]: JSONValue };

/** Runtime fact categories: structural, representation/type, value. */
export type FactCategory = 'S' | 'R' | 'V';

/** One fact the probe collected about an object (docs/architecture.md, section 1). */
export interface IFact {
  cat: FactCategory;
  key: string;
  value: JSONValue;
}

/** One expression of the cell, described by the probe. */
export interface IRuntimeEntry {
  expr: string;
  type: string;
  facts: IFact[];
  children?: IRuntimeEntry[];
  missing?: boolean;
  error?: string | null;
}

/** The probe's result, as far as the frontend reads it. */
export interface IRuntime {
  probe_version?: number;
  python?: string;
  elapsed_ms?: number;
  budget_exhausted?: boolean;
  syntax_error?: { line: number; col: number; msg: string } | null;
  undefined?: string[];
  modules?: { name: string; module: string; version?: string | null }[];
  objects?: IRuntimeEntry[];
}

/** A certain crash found by a deterministic check. */
export interface IFinding {
  rule: string;
  message: string;
  evidence: string[];
  line: number | null;
}

/** The prediction. */
export interface IVerdict {
  detection: boolean;
  reasoning: string;
  source: 'llm' | 'checks' | 'both' | 'syntax';
  votes: boolean[];
  findings: IFinding[];
  cached?: boolean;
}

/** Per-request overrides of the server defaults. */
export interface IAnalyzeSettings {
  model?: string;
  categories?: string;
  runtime?: boolean;
  docs?: boolean;
  votes?: number;
  max_columns?: number;
}

/** Body of `POST /crane/analyze`. */
export interface IAnalyzeRequest {
  kernel_id: string;
  source: string;
  cell_id?: string;
  settings?: IAnalyzeSettings;
}

/** A 200 answer of `POST /crane/analyze`. */
export interface IAnalyzeResult {
  status: 'ok' | 'llm_error' | 'no_model' | 'superseded';
  verdict: IVerdict | null;
  runtime: IRuntime | null;
  runtime_text: string;
  executed_cells: number;
  model: string | null;
  timing: { extraction_ms: number; llm_ms: number; total_ms: number };
  tokens: { prompt: number | null; completion: number | null };
  error?: { kind: string; message: string } | null;
  hint?: string | null;
}

/** `GET /crane/config`: the server's effective defaults. */
export interface IServerConfig {
  model: string | null;
  allowed_models: string[];
  categories: string;
  votes: number;
  temperature: number;
  auto_check: boolean;
  docs: boolean;
  key_configured: boolean;
  missing_env?: string[];
}

/** The user settings of schema/plugin.json, typed. */
export interface ICraneSettings {
  model: string;
  autoCheck: boolean;
  delay: number;
  structural: boolean;
  representation: boolean;
  value: boolean;
  docs: boolean;
  votes: number;
  guard: boolean;
  maxColumns: number;
}

/** Lifecycle of one check of one cell. */
export type CheckPhase = 'checking' | 'done' | 'busy' | 'failed';

/** What is known about the last check of one cell. */
export interface ICheckRecord {
  cellId: string;
  /** Cell text that was checked. */
  source: string;
  /** Kernel epoch (see `KernelEpoch`) when the check started. */
  epoch: number;
  phase: CheckPhase;
  startedAt: number;
  /** The settings the request carried. */
  sent: IAnalyzeSettings;
  result?: IAnalyzeResult;
  /** A request failure (network, HTTP), with the server's message. */
  error?: string;
}

/** Per-notebook verdict state, shared by the badges, the sidebar and the guard. */
export interface ICellChecks {
  /** Emits the id of the cell whose record changed. */
  readonly changed: ISignal<ICellChecks, string>;
  /** Kernel epoch: bumped whenever user code ran or the kernel changed. */
  readonly epoch: number;
  /** Emits the new epoch: every verdict made before it is outdated. */
  readonly epochChanged: ISignal<ICellChecks, number>;
  get(cellId: string): ICheckRecord | undefined;
  /** The most recent checks of the notebook, newest first. */
  readonly history: readonly ICheckRecord[];
}

/** Finds the verdict state of a notebook; other extensions may read verdicts through it. */
export interface ICraneVerdicts {
  forPanel(panel: NotebookPanel): ICellChecks | undefined;
}

export const ICraneVerdicts = new Token<ICraneVerdicts>(
  'crane-jupyterlab:ICraneVerdicts',
  'Per-cell crash predictions of open notebooks.'
);
