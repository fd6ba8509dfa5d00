/**
 * The runtime facts in the diagnosis: one object's facts, collapsed unless they matter to the
 * verdict, and the section that lists every object. The grouping itself is `group.ts`.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import React from 'react';

import type { IFactRow, IObjectFacts } from './group';
import { typeWords } from './values';

/** One fact: the expression when it is not the object's own, and its value or what is wrong with it;
 * dimmed when the settings kept it from the model. */
export function FactRow(props: {
  trans: TranslationBundle;
  row: IFactRow;
  owner: string | null;
  unsent: boolean;
}): React.ReactElement {
  const { trans, row, owner, unsent } = props;
  const classes = [
    'jp-Crane-fact',
    row.decisive ? 'jp-mod-decisive' : '',
    unsent ? 'jp-mod-unsent' : ''
  ]
    .filter(Boolean)
    .join(' ');
  const expr = row.expr === owner ? null : <code>{row.expr}</code>;
  let body: React.ReactNode;
  switch (row.flag) {
    case 'missing':
      body = trans.__('does not exist');
      break;
    case 'undefined':
      body = trans.__('is not defined in the kernel');
      break;
    case 'error':
      body = trans.__('not read: %1', row.value);
      break;
    default:
      body = (
        <>
          {row.key}: <code>{row.value}</code>
        </>
      );
  }
  return (
    <li
      className={classes}
      title={unsent ? trans.__('Not sent to the model (settings)') : undefined}
    >
      {expr}
      {expr ? ' ' : ''}
      {body}
    </li>
  );
}

/** How a related object relates to the cell's object `via`: "m was built from it" (`m = f(X)` in an
 * earlier cell), "m was fitted with it" (`m.fit(X)`), "read by f()" (a global the cell's function reads). */
export function relationText(
  trans: TranslationBundle,
  via: string,
  relation: string | null
): string {
  switch (relation) {
    case 'built':
      return trans.__('%1 was built from it', via);
    case 'fitted':
      return trans.__('%1 was fitted or compiled with it', via);
    case 'read':
      return trans.__('read by %1()', via);
    default:
      return trans.__('%1 uses it', via);
  }
}

/** The facts of one object, collapsed unless they decided the verdict or the deciding text names the
 * object (the objects of the crashing line). */
function ObjectFacts(props: {
  trans: TranslationBundle;
  group: IObjectFacts;
  unsent: (row: IFactRow) => boolean;
}): React.ReactElement {
  const { trans, group } = props;
  const type = typeWords(group.type);
  const relation = group.via
    ? relationText(trans, group.via, group.relation)
    : '';
  // The full type and relation in the title: a narrow panel may cut the header.
  const title = [group.expr, group.type, relation].filter(Boolean).join(' ');
  return (
    <details
      className={`jp-Crane-object${group.decisive ? ' jp-mod-decisive' : ''}`}
      open={group.decisive || group.involved}
    >
      <summary title={title}>
        <code>{group.expr}</code>
        {type ? ` ${type}` : ''}
        {relation ? `; ${relation}` : ''}
      </summary>
      <ul>
        {group.rows.map((row, i) => (
          <FactRow
            key={i}
            trans={trans}
            row={row}
            owner={group.expr}
            unsent={props.unsent(row)}
          />
        ))}
      </ul>
    </details>
  );
}

/** The section "Runtime facts": every object the cell reaches, with its facts. */
export function RuntimeFacts(props: {
  trans: TranslationBundle;
  groups: IObjectFacts[];
  unsent: (row: IFactRow) => boolean;
}): React.ReactElement | null {
  const { trans, groups, unsent } = props;
  if (!groups.length) {
    return null;
  }
  return (
    <div className="jp-Crane-runtime">
      <h3>{trans.__('Runtime facts')}</h3>
      {groups.map((group, i) => (
        <ObjectFacts
          key={`${group.expr}-${i}`}
          trans={trans}
          group={group}
          unsent={unsent}
        />
      ))}
    </div>
  );
}
