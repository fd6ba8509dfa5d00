/*
 * The REST contract of /crane/*, GENERATED from crane_jupyterlab/api.py by scripts/api_types.py.
 * Do not edit: change the pydantic models, then run `python scripts/api_types.py`.
 */

/** Body of `POST /crane/analyze`. */
export interface IAnalyzeRequest {
  kernel_id: string;
  source: string;
  cell_id?: string | null;
  settings?: IAnalyzeSettings;
  typing?: boolean;
  tier?: 'checks' | 'full';
  below?: IBelowCell[] | null;
  previous_source?: string | null;
}

/** A 200 answer that carries an analysis (`ok`, `llm_error`, `no_model`). */
export interface IAnalyzeResult {
  status: 'ok' | 'llm_error' | 'no_model';
  verdict: IVerdict | null;
  runtime: { [key: string]: unknown } | null;
  runtime_text: string;
  executed_cells: number;
  model: string | null;
  timing: ITiming;
  tokens: ITokens;
  error: IErrorInfo | null;
  hint: string | null;
  trial: ITrialOutcome | null;
  fixes: IFix[];
  below: IBelowOutcome[] | null;
  forecast: IForecast | null;
}

/**
 * Every answer without an analysis: superseded, incomplete (code still being typed), busy, and the
 * errors.
 */
export interface IStatusReply {
  status: 'superseded' | 'incomplete' | 'busy' | 'error';
  message?: string | null;
  field?: string | null;
}

/** Body of `GET /crane/config`: the server defaults a settings UI starts from. Never a key. */
export interface IConfigReply {
  model: string | null;
  allowed_models: string[];
  categories: string;
  votes: number;
  temperature: number;
  auto_check: boolean;
  docs: boolean;
  key_configured: boolean;
  missing_env: string[];
  trial: 'off' | 'on-demand' | 'auto';
  trial_available: boolean;
  trial_unavailable_reason: string | null;
}

/** Body of `POST /crane/notebook`: will this notebook run from the top, in a fresh kernel? */
export interface INotebookRequest {
  kernel_id: string;
  cells: IBelowCell[];
  settings?: INotebookSettings;
}

/** `GET /crane/notebook/{id}`: a run from the top, while it runs and after. */
export interface INotebookRun {
  id: string;
  kernel_id: string;
  state: 'running' | 'done' | 'cancelled' | 'error';
  done: number;
  total: number;
  running: number | null;
  elapsed_ms: number;
  cells: INotebookCell[];
  first_crash: INotebookCell | null;
  first_crash_index: number | null;
  message: string | null;
  forecast: IForecast | null;
}

/** Per-request overrides of the server defaults. */
export interface IAnalyzeSettings {
  model?: string | null;
  categories?: string | null;
  runtime?: boolean | null;
  docs?: boolean | null;
  votes?: number | null;
  temperature?: number | null;
  max_columns?: number | null;
  trial?: boolean | null;
  fixes?: boolean | null;
}

/** A code cell below the target, as the frontend has it, for the chain. */
export interface IBelowCell {
  cell_id?: string | null;
  source: string;
}

/** The answer shown to the user and written by the benchmarks. */
export interface IVerdict {
  detection: boolean;
  reasoning: string;
  source: 'trial' | 'syntax' | 'checks' | 'llm' | 'quick' | 'quick_may';
  votes: boolean[];
  findings: IFinding[];
  model: string | null;
  latency_ms: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cost_usd: number | null;
  cached: boolean;
}

export interface ITiming {
  extraction_ms: number;
  llm_ms: number;
  trial_ms: number;
  fix_ms: number;
  replica_ms: number;
  below_ms: number;
  total_ms: number;
}

export interface ITokens {
  prompt: number | null;
  completion: number | null;
}

export interface IErrorInfo {
  kind: string;
  message: string;
}

/**
 * What happened when the target cell ran in a sandbox before the user ran it (a trial run): in a fork
 * of the kernel, or in a fresh worker process on a copy of the cell's inputs (`worker`).
 *
 * Only `crashed` is a crash; `finished` means the cell ran to its end. `blocked` (the sandbox refused a
 * side effect), `timed_out`, `out_of_memory` and `unavailable` say nothing about a crash: the checks and
 * the model decide then, and the UI says why the trial could not.
 */
export interface ITrialOutcome {
  status:
    | 'crashed'
    | 'finished'
    | 'blocked'
    | 'timed_out'
    | 'out_of_memory'
    | 'unavailable';
  exception: string | null;
  message: string | null;
  line: number | null;
  frames: ITrialFrame[];
  elapsed_ms: number | null;
  sandbox: string | null;
  reason: string | null;
  extra_memory_mb: number | null;
  writes: string | null;
  installs: string | null;
  quick: IQuickTrial | null;
  progress: ITrialProgress | null;
  worker: ITrialWorker | null;
  below: IBelowOutcome[];
  forecast: IForecast | null;
}

/**
 * An edit of the cell that a trial ran without an error, on the same kernel state: offered with an
 * Apply button. Never one that no trial ran (crane_jupyterlab/fixes).
 */
export interface IFix {
  title: string;
  source: string;
  origin:
    'close-name' | 'import' | 'renamed-api' | 'message' | 'signature' | 'model';
  line: number | null;
  tried: string;
  shortened: boolean;
  trial_ms: number;
}

/** One code cell below the edited one, run after it in the same trial (the chain). */
export interface IBelowOutcome {
  cell_id: string | null;
  status:
    | 'crashed'
    | 'finished'
    | 'shortened'
    | 'skipped'
    | 'not_reached'
    | 'blocked'
    | 'timed_out'
    | 'out_of_memory'
    | 'unavailable';
  exception: string | null;
  message: string | null;
  line: number | null;
  reads: string[];
  elapsed_ms: number | null;
  reason: string | null;
  after_cut: boolean;
  quick: IQuickTrial | null;
  without_edit: boolean | null;
  unbound: string[];
  forecast: IForecast | null;
  installs: string | null;
}

/**
 * Before the cell runs: how long it takes whole and what the kernel's memory peaks at, from what its
 * trial measured (kernel/trial/forecast.py). `observed`: the trial ran it whole (or to its crash);
 * `projected`: from the first iterations of loops it cut, or from fewer threads than the kernel's.
 * Never a claim that the cell crashes.
 */
export interface IForecast {
  seconds: number | null;
  seconds_low: number | null;
  seconds_high: number | null;
  at_least: boolean;
  basis: 'observed' | 'projected';
  projected_from: IForecastBasis[];
  threads: IForecastThreads | null;
  peak_memory_mb: number | null;
  memory_available_mb: number | null;
  gpu_peak_mb: number | null;
  gpu_available_mb: number | null;
  out_of_memory: boolean;
  runs_out_at: IRunsOutAt | null;
}

export interface INotebookSettings {
  full?: boolean;
  budget_s?: number | null;
}

/** One code cell of a run from the top. */
export interface INotebookCell {
  cell_id: string | null;
  status:
    | 'ran'
    | 'shortened'
    | 'crashed'
    | 'blocked'
    | 'unavailable'
    | 'timed_out'
    | 'out_of_memory'
    | 'not_reached';
  exception: string | null;
  message: string | null;
  line: number | null;
  elapsed_ms: number | null;
  shortened: boolean;
  quick: IQuickTrial | null;
  after_cut: boolean;
  reason: string | null;
  hidden: boolean | null;
  forecast: IForecast | null;
  installs: string | null;
}

/** A certain crash found by a deterministic check. */
export interface IFinding {
  rule: string;
  message: string;
  evidence: string[];
  line: number | null;
}

/** One frame of an observed traceback that lies in the target cell. */
export interface ITrialFrame {
  line: number;
  text: string;
}

/** What the loops did in a trial whose long loops were cut after k iterations (kernel/trial/quick.py). */
export interface IQuickTrial {
  k: number;
  loops: ITrialLoop[];
  cut: boolean;
  crash: 'certain' | 'depends' | 'shortened' | null;
  skipped_asserts: number[];
}

/** How far a trial that ran out of time got: the cell's line it was on, its outer loops so far. */
export interface ITrialProgress {
  line: number | null;
  loops: ITrialLoop[];
  elapsed_ms: number | null;
}

/**
 * A trial run in a fresh worker process on a copy of the cell's inputs (kernel/trial/worker.py), where
 * a fork of the kernel could not run the cell (TensorFlow's runtime, the GPU).
 */
export interface ITrialWorker {
  reason: string | null;
  spare: string | null;
  names: number | null;
  inputs_mb: number | null;
  pack_ms: number | null;
  rebuild_ms: number | null;
  handover_ms: number | null;
  warm_ms: number | null;
}

/** One loop a forecast projected from: what the trial measured of it. */
export interface IForecastBasis {
  line: number | null;
  kind: string | null;
  iterations: number | null;
  total: number | null;
  runs: number | null;
  seconds_per_iteration: number | null;
  memory_kb_per_iteration: number | null;
}

/** Torch's compute, run on fewer threads in the trial than the kernel's: scaled to the kernel's. */
export interface IForecastThreads {
  trial: number;
  kernel: number;
  share: number;
}

/** Where a cell projected to run out of memory would: its loop's line and iteration. */
export interface IRunsOutAt {
  line: number | null;
  iteration: number;
  of: number;
}

/**
 * One loop of the cell in a trial: how many iterations ran (over all its runs), whether it was cut
 * short (a quick trial), its length when known (`len` of what it iterates, or Keras' epochs).
 */
export interface ITrialLoop {
  line: number;
  kind: string;
  iterations: number;
  runs: number;
  cut: boolean;
  total: number | null;
  seconds: number | null;
  full_s: number | null;
}
