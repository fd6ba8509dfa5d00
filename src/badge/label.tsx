/**
 * The levels on screen in the panel's React views: a state's name with its icon, in the colours of
 * its level (as the badge shows it), and text whose code marks show as code (the badge shows the
 * same text `plain`).
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import React from 'react';

import type { ICheckRecord } from '../contract/tokens';
import type { CellState } from './levels';
import { stateIcon } from './widget';
import { stateLabel } from './words';

/** A state's name with its icon, in the colours of its level. */
export function StateLabel(props: {
  trans: TranslationBundle;
  state: CellState;
  record: ICheckRecord | undefined;
  stale?: boolean;
}): React.ReactElement {
  const icon = stateIcon(props.state, props.record);
  return (
    <span
      className={`jp-Crane-level jp-mod-${props.state}${props.stale ? ' jp-mod-stale' : ''}`}
    >
      {icon && <icon.react tag="span" className="jp-Crane-level-icon" />}
      {stateLabel(props.trans, props.state)}
    </span>
  );
}

/** Text with Markdown code spans shown as code. */
export function Rich(props: { text: string }): React.ReactElement {
  const parts = props.text.split(/`([^`]*)`/g);
  return (
    <>
      {parts.map((part, i) =>
        i % 2 === 1 ? <code key={i}>{part}</code> : part
      )}
    </>
  );
}
