/**
 * Timing logic of the checks, free of any JupyterLab object so it is unit-tested on its own:
 * debouncing the cell text, and dropping answers that a newer request superseded.
 */

/**
 * Calls `fn` once the triggers stop for `delay` ms.
 */
export class Debouncer {
  constructor(
    private readonly _fn: () => void,
    private _delay: number
  ) {}

  /** Milliseconds of quiet required before `fn` runs. Applies from the next trigger on. */
  get delay(): number {
    return this._delay;
  }
  set delay(value: number) {
    this._delay = Math.max(0, value);
  }

  /** Whether a call is scheduled. */
  get pending(): boolean {
    return this._handle !== null;
  }

  /** (Re)start the quiet period. */
  trigger(): void {
    this.cancel();
    this._handle = setTimeout(() => {
      this._handle = null;
      this._fn();
    }, this._delay);
  }

  /** Forget a scheduled call. */
  cancel(): void {
    if (this._handle !== null) {
      clearTimeout(this._handle);
      this._handle = null;
    }
  }

  /** Run a scheduled call now. */
  flush(): void {
    if (this._handle !== null) {
      this.cancel();
      this._fn();
    }
  }

  private _handle: ReturnType<typeof setTimeout> | null = null;
}

/**
 * One counter per key (a cell id): every request takes a new generation, and only the answer of
 * the latest generation may be applied. Answers arrive out of order when a slow check is overtaken
 * by a newer one.
 */
export class Generations {
  /** Start a new request for `key`; returns its generation. */
  next(key: string): number {
    const value = (this._counters.get(key) ?? 0) + 1;
    this._counters.set(key, value);
    return value;
  }

  /** Whether `generation` is still the latest request of `key`. */
  isCurrent(key: string, generation: number): boolean {
    return this._counters.get(key) === generation;
  }

  /** Invalidate any request in flight for `key` (the cell was deleted). */
  drop(key: string): void {
    this._counters.set(key, (this._counters.get(key) ?? 0) + 1);
  }

  private _counters = new Map<string, number>();
}
