/**
 * Label and value pairs, the rows of the panel's trial run and details.
 */
import React from 'react';

/** Label and value pairs, one per line, each wrapping as a sentence does (no narrow column). */
export function Pairs(props: {
  className?: string;
  rows: [string, React.ReactNode][];
}): React.ReactElement | null {
  if (!props.rows.length) {
    return null;
  }
  return (
    <dl className={`jp-Crane-pairs ${props.className ?? ''}`.trim()}>
      {props.rows.map(([label, value]) => (
        <div key={label} className="jp-Crane-pair">
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
