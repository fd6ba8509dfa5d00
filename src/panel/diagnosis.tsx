/**
 * The diagnosis of one cell in the sidebar: the cause first (one sentence, the line, the decisive
 * facts), then how long it takes and what memory it needs before it runs, then a trial run's
 * outcome, then the other facts by object, then the details that mean something for this answer
 * (model, votes, latency, tokens). The trial run's section is `trial.tsx`, the forecast's ("Before
 * it runs") `forecast/view.tsx`, the facts' rows and groups `facts/view.tsx`.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import React from 'react';

import type { IAnalyzeResult, IFix } from '../contract/api';
import type { ICheckRecord } from '../contract/tokens';
import { Rich } from '../badge/label';
import type { IAssessment } from '../badge/levels';
import { assess, plain } from '../badge/levels';
import type { ICellView } from '../badge/verdict';
import { offeredFix } from '../badge/verdict';
import { causeText, formatDuration, runCause } from '../badge/words';
import type { IFactRow, IObjectFacts } from '../facts/group';
import { decisiveRows, factsOf } from '../facts/group';
import { FactRow, RuntimeFacts } from '../facts/view';
import { ForecastSection } from '../forecast/view';
import { Pairs } from './pairs';
import { TrialSection } from './trial';

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
  /** The chain's section (`below/view.tsx`), after the trial run's: the cells below, or a claim. */
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
      {result && (
        <ForecastSection
          trans={trans}
          forecast={result.forecast}
          crashed={result.trial?.status === 'crashed'}
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
