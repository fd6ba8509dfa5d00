/**
 * The diagnosis of one cell in the sidebar: the cause first (one sentence, the line, the decisive
 * facts), then a trial run's outcome, then the other facts by object, then the details that mean
 * something for this answer (model, votes, latency, tokens). The facts' rows and groups are
 * `factview.tsx`.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import React from 'react';

import type { IAnalyzeResult, IFix, ITrialWorker } from '../contract/api';
import { stateIcon } from '../badge/widget';
import type { IFactRow, IObjectFacts } from '../facts/group';
import { decisiveRows, factsOf } from '../facts/group';
import { FactRow, RuntimeFacts } from '../facts/view';
import type { CellState, IAssessment } from '../badge/levels';
import {
  assess,
  causeText,
  plain,
  runCause,
  stateLabel
} from '../badge/levels';
import type { ICheckRecord } from '../contract/tokens';
import {
  isInconclusive,
  loopsText,
  progressText,
  trialFallbackText,
  trialStatusLabel
} from '../badge/trial';
import type { ICellView } from '../badge/verdict';
import { offeredFix } from '../badge/verdict';

/** What the diagnosis needs besides the record. */
export interface IDiagnosisProps {
  trans: TranslationBundle;
  record: ICheckRecord | undefined;
  view: ICellView;
  /** The cell's current text (for the line the cause points at). */
  source: string;
  /** The categories the server sends when the request does not say. */
  serverCategories: string;
  /** Apply the offered fix to the cell (absent: no Apply button). */
  onApplyFix?: (fix: IFix) => void;
  /** The chain's section (chainview.tsx), after the trial run's: the cells below, or a claim. */
  chain?: React.ReactNode;
}

/**
 * The verified fix: the change, what was tried, the changed line before and after, and Apply.
 */
export function FixSection(props: {
  trans: TranslationBundle;
  fix: IFix;
  source: string;
  onApply?: (fix: IFix) => void;
}): React.ReactElement {
  const { trans, fix, source, onApply } = props;
  const line = fix.line ?? 1;
  const before = source.split('\n')[line - 1] ?? '';
  const after = fix.source.split('\n')[line - 1] ?? '';
  return (
    <div className="jp-Crane-fix">
      <h3>{trans.__('A fix that ran')}</h3>
      <p className="jp-Crane-fix-title">
        <code>{fix.title}</code>
      </p>
      <p className="jp-Crane-fix-tried">{fix.tried}</p>
      <pre
        className="jp-Crane-fix-diff"
        aria-label={trans.__('Line %1, before and after', line)}
      >
        {fix.origin === 'import' ? (
          <ins>{'+ ' + after}</ins>
        ) : (
          <>
            <del>{'- ' + before}</del>
            {'\n'}
            <ins>{'+ ' + after}</ins>
          </>
        )}
      </pre>
      {onApply && (
        <button
          className="jp-Button jp-mod-styled jp-mod-accept jp-Crane-fix-apply"
          onClick={() => onApply(fix)}
        >
          {trans.__('Apply fix')}
        </button>
      )}
    </div>
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

/** Milliseconds in words: "35 ms", "2.4 s", "3 min 5 s", "1 h 2 min". */
export function formatDuration(ms: number): string {
  if (ms <= 0) {
    return '0 s';
  }
  if (ms < 1) {
    return 'under 1 ms';
  }
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  const s = ms / 1000;
  if (s < 60) {
    return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  }
  const minutes = Math.floor(s / 60);
  if (minutes < 60) {
    return `${minutes} min ${Math.round(s - minutes * 60)} s`;
  }
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

function unique(items: string[]): string[] {
  return items.filter((item, i) => items.indexOf(item) === i);
}

/** The line `line` (1-based) of `source`, if it has one. */
function lineOf(source: string, line: number | null): string | null {
  if (line === null || line < 1) {
    return null;
  }
  const text = source.split('\n')[line - 1];
  return text === undefined ? null : text.trim();
}

function Cause(props: {
  trans: TranslationBundle;
  result: IAnalyzeResult;
  assessment: IAssessment;
  source: string;
  groups: IObjectFacts[];
}): React.ReactElement | null {
  const { trans, result, assessment, source, groups } = props;
  const verdict = result.verdict!;
  const lineText = lineOf(source, assessment.line);
  // A check's evidence states the facts it used; otherwise, the facts the deciding text names.
  const evidence =
    verdict.source === 'checks' || verdict.source === 'syntax'
      ? unique(
          ([] as string[]).concat(...verdict.findings.map(f => f.evidence))
        )
      : [];
  const decisive = evidence.length ? [] : decisiveRows(groups);
  const note = assessment.notes.length > 0 && (
    <p className="jp-Crane-cause-note">
      {trans.__(
        'Note: the kernel has no %1. The checks judged that the cell defines it or does not need it; a model could tell more.',
        assessment.notes.join(', ')
      )}
    </p>
  );
  if (assessment.level === 'no-crash') {
    // What was tried heads the panel already (under the level): only a note is added here.
    return note ? <div className="jp-Crane-cause">{note}</div> : null;
  }
  return (
    <div className="jp-Crane-cause">
      <h3>{trans.__('Cause')}</h3>
      <p className="jp-Crane-cause-text">
        <Rich text={causeText(trans, assessment, result)} />
      </p>
      {assessment.fullMessage && (
        <details className="jp-Crane-message">
          <summary>{trans.__('The whole message')}</summary>
          <pre>{assessment.fullMessage}</pre>
        </details>
      )}
      {assessment.line !== null && (
        <p className="jp-Crane-cause-line">
          {trans.__('Line %1', assessment.line)}
          {lineText ? ': ' : ''}
          {lineText && <code>{lineText}</code>}
        </p>
      )}
      {note}
      {(evidence.length > 0 || decisive.length > 0) && (
        <>
          <h4>{trans.__('Decisive facts')}</h4>
          <ul className="jp-Crane-decisive">
            {evidence.map((e, i) => (
              <li key={`e${i}`} className="jp-Crane-fact jp-mod-decisive">
                <Rich text={e} />
              </li>
            ))}
            {decisive.map((row, i) => (
              <FactRow
                key={`d${i}`}
                trans={trans}
                row={row}
                owner={null}
                unsent={false}
              />
            ))}
          </ul>
        </>
      )}
      {verdict.source !== 'llm' && verdict.findings.length > 1 && (
        <>
          <h4>{trans.__('Other findings')}</h4>
          <ul className="jp-Crane-findings">
            {verdict.findings.slice(1).map((f, i) => (
              <li key={i}>
                <Rich text={f.message} />
                {f.line !== null ? ' ' + trans.__('(line %1)', f.line) : ''}
              </li>
            ))}
          </ul>
        </>
      )}
      {verdict.source === 'llm' &&
        plain(verdict.reasoning).trim() !== assessment.cause && (
          <details className="jp-Crane-reasoning">
            <summary>{trans.__("The model's reasoning")}</summary>
            <p>
              <Rich text={verdict.reasoning} />
            </p>
          </details>
        )}
    </div>
  );
}

/** Label and value pairs, one per line, each wrapping as a sentence does (no narrow column). */
function Pairs(props: {
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

/** Where a worker trial ran: a copy of the cell's inputs in a fresh process, and why not a fork. */
function workerText(trans: TranslationBundle, worker: ITrialWorker): string {
  const copied =
    worker.names !== null && worker.inputs_mb !== null
      ? trans._n(
          "a fresh process, on a copy of the cell's input (%1 name, %2 MB)",
          "a fresh process, on a copy of the cell's inputs (%1 names, %2 MB)",
          worker.names,
          worker.inputs_mb.toFixed(1)
        )
      : trans.__("a fresh process, on a copy of the cell's inputs");
  return worker.reason ? `${copied}: ${worker.reason}` : copied;
}

/**
 * The trial run's outcome: what happened, how long, in which sandbox, and what decided instead. An
 * observed crash's exception and line are the cause above, said once; the frames only when they go
 * through more than the crashing line (a function the cell defines).
 */
export function TrialSection(props: {
  trans: TranslationBundle;
  result: IAnalyzeResult;
}): React.ReactElement | null {
  const { trans, result } = props;
  const trial = result.trial;
  if (!trial) {
    return null;
  }
  const verdict = result.verdict;
  const inconclusive = isInconclusive(trial);
  const rows: [string, React.ReactNode][] = [];
  if (!inconclusive || !verdict) {
    rows.push([trans.__('Outcome'), trialStatusLabel(trans, trial.status)]);
  }
  if (trial.elapsed_ms !== null) {
    rows.push([trans.__('Ran for'), formatDuration(trial.elapsed_ms)]);
  }
  if (trial.extra_memory_mb !== null) {
    rows.push([
      trans.__('Extra memory'),
      trans.__('%1 MB', trial.extra_memory_mb.toFixed(1))
    ]);
  }
  if (trial.writes) {
    rows.push([trans.__('Files'), trial.writes]);
  }
  if (trial.quick?.cut) {
    rows.push([
      trans.__('Quick trial'),
      loopsText(
        trans,
        trial.quick.loops.filter(l => l.cut)
      )
    ]);
  }
  const progress = progressText(trans, trial);
  if (progress) {
    rows.push([trans.__('Got through'), progress]);
  }
  if (trial.worker) {
    rows.push([trans.__('Ran in'), workerText(trans, trial.worker)]);
  }
  if (trial.sandbox) {
    // 'seccomp+landlock+netns' as words, so a narrow panel breaks it between them.
    rows.push([trans.__('Sandbox'), trial.sandbox.split('+').join(', ')]);
  }
  if (
    trial.reason &&
    trial.status !== 'crashed' &&
    !(inconclusive && verdict)
  ) {
    rows.push([trans.__('Why'), trial.reason]);
  }
  const frames =
    trial.status === 'crashed' && trial.frames.length > 1 ? trial.frames : [];
  return (
    <div className={`jp-Crane-trial jp-mod-${trial.status}`}>
      <h3>{trans.__('Trial run')}</h3>
      {inconclusive && verdict && (
        <p className="jp-Crane-trial-fallback">
          {trialFallbackText(trans, trial, verdict.source)}
        </p>
      )}
      <Pairs rows={rows} />
      {frames.length > 0 && (
        <>
          <h4>{trans.__('Where it went, in the cell')}</h4>
          <ol className="jp-Crane-frames">
            {frames.map((f, i) => (
              <li key={i}>
                {trans.__('line %1', f.line)}: <code>{f.text}</code>
              </li>
            ))}
          </ol>
        </>
      )}
    </div>
  );
}

/** Model, votes, latency, tokens: only the rows that mean something for this answer. */
function Details(props: {
  trans: TranslationBundle;
  result: IAnalyzeResult;
  sentCategories: string;
}): React.ReactElement {
  const { trans, result, sentCategories } = props;
  const verdict = result.verdict;
  const modelAsked = verdict?.source === 'llm' || result.status === 'llm_error';
  const votes =
    modelAsked && verdict && verdict.votes.length > 1
      ? [verdict.votes.filter(Boolean).length, verdict.votes.length]
      : null;
  const timing = result.timing;
  const latency = [
    trans.__('runtime facts %1', formatDuration(timing.extraction_ms))
  ];
  if (timing.trial_ms > 0) {
    latency.push(trans.__('trial run %1', formatDuration(timing.trial_ms)));
  }
  if (timing.llm_ms > 0) {
    latency.push(trans.__('model %1', formatDuration(timing.llm_ms)));
  }
  const tokens = result.tokens;
  const rows: [string, React.ReactNode][] = [];
  if (modelAsked && result.model) {
    rows.push([
      trans.__('Model'),
      result.model + (verdict?.cached ? ' ' + trans.__('(cached answer)') : '')
    ]);
  }
  if (votes) {
    rows.push([
      trans.__('Votes'),
      trans.__('%1 of %2 for a crash', votes[0], votes[1])
    ]);
  }
  rows.push([
    trans.__('Time'),
    trans.__('%1 (%2)', formatDuration(timing.total_ms), latency.join(', '))
  ]);
  if (modelAsked && (tokens.prompt !== null || tokens.completion !== null)) {
    rows.push([
      trans.__('Tokens'),
      trans.__(
        '%1 prompt, %2 answer',
        tokens.prompt ?? '?',
        tokens.completion ?? '?'
      )
    ]);
  }
  if (modelAsked) {
    rows.push([
      trans.__('Sent'),
      trans.__(
        '%1 executed cells, facts %2',
        result.executed_cells,
        sentCategories || trans.__('none')
      )
    ]);
  }
  return (
    <details className="jp-Crane-details">
      <summary>{trans.__('Details')}</summary>
      <Pairs rows={rows} />
    </details>
  );
}

/**
 * The full diagnosis of one check record.
 */
export function Diagnosis(props: IDiagnosisProps): React.ReactElement | null {
  const { trans, record, view, source } = props;
  if (!record) {
    return null;
  }
  const result = record.result;
  const problem = record.error ?? result?.error?.message ?? null;
  const assessment = result ? assess(result) : null;
  const groups = factsOf(result);
  const sent = record.sent.categories ?? props.serverCategories;
  const modelAsked =
    result?.verdict?.source === 'llm' || result?.status === 'llm_error';
  const unsent = (row: IFactRow) =>
    modelAsked && row.cat !== null && !sent.includes(row.cat);
  const run = record.run && record.source === source ? record.run : null;
  const fix = offeredFix(record, source);
  return (
    <>
      {run && (
        <div className={`jp-Crane-run jp-mod-${run.kind}`}>
          <h3>{trans.__('When you ran it')}</h3>
          <p>
            {run.kind === 'confirmed'
              ? trans.__('It crashed as warned: %1', runCause(run))
              : run.kind === 'passed'
                ? trans.__(
                    'It ran without an error. It is checked again when you edit it or restart the kernel.'
                  )
                : trans.__(
                    'It crashed with %1, though the check had found no crash. This is counted as a missed crash.',
                    runCause(run)
                  )}
          </p>
        </div>
      )}
      {problem && view.state === 'error' && (
        <p className="jp-Crane-error">{problem}</p>
      )}
      {result && assessment && (
        <Cause
          trans={trans}
          result={result}
          assessment={assessment}
          source={record.source}
          groups={groups}
        />
      )}
      {fix && (
        <FixSection
          trans={trans}
          fix={fix}
          source={source}
          onApply={props.onApplyFix}
        />
      )}
      {result && <TrialSection trans={trans} result={result} />}
      {props.chain}
      <RuntimeFacts trans={trans} groups={groups} unsent={unsent} />
      {result && (
        <Details trans={trans} result={result} sentCategories={sent} />
      )}
    </>
  );
}
