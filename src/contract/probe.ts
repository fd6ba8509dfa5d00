/**
 * What the frontend reads of the kernel probe's result (docs/architecture.md, section 1). The REST
 * contract (`api.ts`) types `AnalyzeResult.runtime` as an open JSON object, since its shape belongs
 * to the probe, not to the server; `runtimeOf` narrows it.
 */
import type { IAnalyzeResult } from './api';

/** A JSON value, as the probe returns them. */
export type JSONPrimitive = string | number | boolean | null;
export type JSONValue =
  JSONPrimitive | JSONValue[] | { [key: string]: JSONValue };

/** Runtime fact categories: structural, representation/type, value. */
export type FactCategory = 'S' | 'R' | 'V';

/** One fact the probe collected about an object. */
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
  /** Related objects: the cell's object this one relates to, and how. */
  via?: string;
  relation?: string;
}

/** A library the cell names. */
export interface IRuntimeModule {
  name: string;
  module: string;
  version?: string | null;
  imported?: boolean;
}

/** The probe's result, as far as the frontend reads it. */
export interface IRuntime {
  probe_version?: number;
  python?: string;
  elapsed_ms?: number;
  budget_exhausted?: boolean;
  syntax_error?: { line: number; col: number; msg: string } | null;
  undefined?: string[];
  modules?: IRuntimeModule[];
  objects?: IRuntimeEntry[];
}

/** The probe result of an analysis, or null when it has none. */
export function runtimeOf(
  result: Pick<IAnalyzeResult, 'runtime'> | undefined | null
): IRuntime | null {
  const runtime = result?.runtime;
  return runtime && typeof runtime === 'object' ? (runtime as IRuntime) : null;
}
