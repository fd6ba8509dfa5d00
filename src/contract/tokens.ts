import { Token } from '@lumino/coreutils';
import type { ISignal } from '@lumino/signaling';
import type { NotebookPanel } from '@jupyterlab/notebook';

import type {
  IAnalyzeResult,
  IAnalyzeSettings,
  IBelowOutcome,
  IConfigReply
} from './api';

/** `GET /crane/config`: the server's effective defaults (generated from the REST contract). */
export type IServerConfig = IConfigReply;

/** The trial-run choice of the settings: never, on request, with every check. */
export type TrialMode = IConfigReply['trial'];

/** The user settings of schema/plugin.json, typed. */
export interface ICraneSettings {
  model: string;
  autoCheck: boolean;
  delay: number;
  trial: TrialMode;
  structural: boolean;
  representation: boolean;
  value: boolean;
  docs: boolean;
  votes: number;
  guard: boolean;
  maxColumns: number;
  chain: boolean;
}

/** Lifecycle of one check of one cell. */
export type CheckPhase = 'checking' | 'done' | 'busy' | 'failed';

/** What happened when the user ran a cell's text. */
export interface IRunOutcome {
  /**
   * confirmed: it crashed as warned; missed: it crashed though the check found no crash; passed: it
   * ran without an error (the cell is not checked again on focus until its text or kernel changes).
   */
  kind: 'confirmed' | 'missed' | 'passed';
  /** The exception's class name and message, from the kernel's error message ('' when passed). */
  ename: string;
  evalue: string;
  /** When the run ended (ms since the epoch). */
  at: number;
}

/**
 * A check of the shown verdict's very text in flight: the verdict stays on display (and the guard
 * keeps asking on a warning) until the answer replaces it. `recheck`: checking again (the kernel
 * changed); `trial` / `model`: the full check follows the checks' first answer; `busy`: waiting for
 * user code to finish.
 */
export interface IPending {
  what: 'recheck' | 'trial' | 'model' | 'busy';
  /** Kernel epoch when it started. */
  epoch: number;
  /** The tier asked for (see `ICheckRecord.tier`). */
  tier?: 'checks' | 'full';
}

/**
 * What the chain of another cell's check met in this cell (`below/chain.ts`): that check's trial
 * ran the other cell (the origin), then the code cells below it in order, and this one crashed there.
 * A record that carries a claim has no server answer of its own (`result` is absent).
 */
export interface IChainClaim {
  /** The checked cell whose trial ran this one after it. */
  originId: string;
  /** Its text, as that trial ran it. */
  originSource: string;
  /**
   * The origin's text against the text the kernel last ran of it: `edited` (another text), `new` (the
   * kernel never ran it, as far as this page saw), `same` (it ran this very text).
   */
  origin: 'edited' | 'new' | 'same';
  /** What this cell met in the chain. */
  outcome: IBelowOutcome;
  /**
   * The kernel has since run the origin's text without an error: the claim's premise is the kernel's
   * own state now, so a check of this cell on the kernel as it is may confirm or clear it.
   */
  applied?: boolean;
}

/** What is known about the last check of one cell. */
export interface ICheckRecord {
  cellId: string;
  /** Cell text that was checked. */
  source: string;
  /** Kernel epoch (see `ICellChecks.epoch`) when the check started. */
  epoch: number;
  phase: CheckPhase;
  startedAt: number;
  /** The settings the request carried. */
  sent: IAnalyzeSettings;
  result?: IAnalyzeResult;
  /** A request failure (network, HTTP), with the server's message. */
  error?: string;
  /** The user ran this very text afterwards. */
  run?: IRunOutcome;
  /** `checks`: the first answer, from the probe and the checks alone (the full one follows). */
  tier?: 'checks' | 'full';
  pending?: IPending;
  /**
   * A warning kept although a later check of the same text did not warn: that check (of `tier`, at
   * kernel `epoch`) could not overrule it (it failed, or lacked the evidence that made the warning).
   */
  rechecked?: { epoch: number; tier: 'checks' | 'full' };
  /** A claim of another cell's chain about this cell, in place of a check of its own. */
  chain?: IChainClaim;
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
  /** The most recent checks and crashes of the notebook, newest first. */
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
