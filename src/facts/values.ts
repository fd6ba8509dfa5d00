/**
 * A runtime fact's value in words, as the panel shows it: Python's spelling ('Age' quoted, None),
 * bounded, and a type in a few words ("pandas DataFrame").
 */
import type { JSONValue } from '../contract/probe';

/** A value as Python prints it (the cell's language): 'Age' quoted, None, nested lists. */
function pythonic(value: JSONValue): string {
  if (value === null) {
    return 'None';
  }
  if (typeof value === 'string') {
    return `'${value}'`;
  }
  if (Array.isArray(value)) {
    return `[${value.map(pythonic).join(', ')}]`;
  }
  if (typeof value === 'object') {
    return Object.entries(value)
      .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : pythonic(v)}`)
      .join(', ');
  }
  return String(value);
}

/** Kinds of 1-D data (the probe's vocabulary) in words. */
const KIND_WORDS: { [kind: string]: string } = {
  'few-valued': 'few distinct values',
  'many-valued': 'many distinct values',
  'all-nan': 'all NaN'
};

/**
 * A fact's value in words, bounded; null when it says nothing worth a line: an empty list or mapping,
 * a list of Nones (`index_names: [None]`, an unnamed index). Empty NaN counts say "no NaN"; dtype
 * counts read "1 int64, 1 str column".
 */
export function factValue(
  key: string,
  value: JSONValue,
  max = 80
): string | null {
  const bound = (text: string) =>
    text.length > max ? text.slice(0, max - 1) + '…' : text;
  if (typeof value === 'string') {
    return bound(key === 'kind' ? (KIND_WORDS[value] ?? value) : value);
  }
  if (Array.isArray(value)) {
    return value.every(v => v === null) ? null : bound(pythonic(value));
  }
  if (value === null || typeof value !== 'object') {
    return bound(pythonic(value));
  }
  const entries = Object.entries(value);
  if (key === 'nan_columns' && !entries.length) {
    return 'no NaN';
  }
  if (!entries.length) {
    return null;
  }
  if (key === 'dtypes' && entries.every(([, n]) => typeof n === 'number')) {
    // "1 int64, 2 str columns": the noun agrees with the last count, as a person says it.
    const last = entries[entries.length - 1][1] as number;
    const counts = entries.map(([dtype, n]) => `${n} ${dtype}`).join(', ');
    return bound(`${counts} ${last === 1 ? 'column' : 'columns'}`);
  }
  return bound(pythonic(value));
}

/** Types a reader knows by another name. */
const TYPE_WORDS: { [type: string]: string } = {
  'numpy.ndarray': 'NumPy array',
  'pandas.DataFrame': 'pandas DataFrame',
  'pandas.Series': 'pandas Series'
};

/**
 * A type in a few words: "NumPy array", "sklearn RandomForestClassifier" for
 * `sklearn.ensemble._forest.RandomForestClassifier` (the library and the class; the module path
 * between them says nothing to a reader and makes the header too long for the panel).
 */
export function typeWords(type: string): string {
  if (TYPE_WORDS[type]) {
    return TYPE_WORDS[type];
  }
  const parts = type.split('.');
  return parts.length > 1 ? `${parts[0]} ${parts[parts.length - 1]}` : type;
}
