import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, type Problem, ProblemError } from '../api/client';
import { SYNC_STATUSES } from '../api/enums';
import { platformLabel } from '../api/platforms';
import type { Audience, Connection, Page, SyncRun } from '../api/types';
import {
  ConfirmDialog,
  EmptyState,
  formatDate,
  Loading,
  Notice,
  NotFound,
  PageHeader,
  ProblemNotice,
  StatusBadge,
} from '../components/feedback';
import { AUDIENCES, CONNECTIONS } from '../components/references';
import { ResourceList } from '../components/resource-list';
import { usePolled } from '../components/use-polled';
import { useSession } from '../session';

const API = '/api/v1/syncs/';
export const SYNCS_APP = '/app/syncs';
/** A run in progress is read again every second: a sync to the fakes or a small list ends in seconds. */
const ACTIVE_POLL_MS = 1000;

type Status = SyncRun['status'];

/** Keyed by the document's statuses, so a status the service adds fails the type check here until it has words. */
export const SYNC_STATUS_LABELS: Record<Status, string> = {
  queued: 'Queued',
  running: 'Running',
  awaiting_platform: 'Awaiting platform',
  succeeded: 'Succeeded',
  partially_failed: 'Partially failed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

const STATUS_WORDS: Record<Status, string> = {
  queued: 'Queued: the run waits for a worker',
  running: 'Running: the difference is being sent',
  awaiting_platform: 'Awaiting the platform: Google is processing the upload; the final result comes later',
  succeeded: 'Succeeded: the platform accepted every member sent',
  partially_failed: 'Partially failed: some members were refused or not sent (see the reasons below)',
  failed: 'Failed: see the error below',
  cancelled: 'Cancelled before it started: nothing was sent',
};

const TRIGGER_WORDS: Record<SyncRun['trigger'], string> = {
  manual: 'Sync now',
  membership_change: 'After a membership change',
  schedule: 'Scheduled',
};

/** `error_code` (SyncRunDto) in words, for the marketer who reads the run. */
const ERROR_WORDS: Record<NonNullable<SyncRun['error_code']>, string> = {
  reauthorize_required: 'The connection’s authorization is gone or lacks a permission: reconnect it on the Connections page.',
  terms_not_accepted: 'An admin must accept Google’s Customer Match terms on this connection first.',
  rate_limited: 'The platform kept refusing requests as too many; the next sync tries again.',
  platform_unavailable: 'The platform could not be reached or kept failing; the next sync tries again.',
  audience_flagged: 'Meta flagged this audience and refuses changes to it: review it in Meta Ads Manager.',
  not_found: 'The list or the ad account no longer exists on the platform.',
  permission_denied: 'The platform refused: this ad account may not manage audience lists with this login.',
  invalid_request: 'The platform refused the request as invalid.',
  platform_error: 'The platform answered with an error.',
  destination_removed: 'This connection is no longer a destination of the audience.',
  audience_not_active: 'The audience is no longer active.',
  verdict_unavailable: 'Google gave no final verdict on the upload.',
};

/** `failed_by_reason` keys (SyncRunDto) in words; a reason not here (Google's own, say) is shown as it is. */
const FAILURE_WORDS: Record<string, string> = {
  invalid_hash: 'A hash is not valid SHA-256 (checked before sending)',
  invalid_field: 'A field the platform does not take (checked before sending)',
  too_large: 'Too large for one request (checked before sending)',
  audience_too_small: 'Meta refused the removal: the audience would become too small (tried again at the next sync)',
  invalid_request: 'The platform refused the request as invalid',
  request_failed: 'The request failed',
  INVALID_SHA256_FORMAT: 'Google: a hash is not valid SHA-256',
};

export const failureWords = (reason: string) => FAILURE_WORDS[reason] ?? reason;
export const runFinished = (run: { status: Status }) => ['succeeded', 'partially_failed', 'failed', 'cancelled'].includes(run.status);

/** A rate of 0–1 as a whole percentage ("62%"); none is a dash. */
export function percent(rate: number | null): string {
  return rate === null ? '—' : `${Math.round(rate * 100)}%`;
}

export function SyncStatus(props: { status: Status }) {
  return <StatusBadge status={props.status} label={SYNC_STATUS_LABELS[props.status]} />;
}

export function triggerWords(run: SyncRun): string {
  return `${TRIGGER_WORDS[run.trigger]}${run.dry_run ? ' (dry run)' : ''}`;
}

/**
 * Names of audiences and connections by id, read once per page load: a run holds ids, and a list
 * of twenty runs shares a handful of them. A deleted one reads as its kind and id.
 */
const names = new Map<string, Promise<string>>();

function nameOf(kind: 'audience' | 'connection', id: number): Promise<string> {
  const key = `${kind}:${id}`;
  let name = names.get(key);
  if (!name) {
    name =
      kind === 'audience'
        ? api<Audience>('GET', `/api/v1/audiences/${id}/`).then((row) => row.name)
        : api<Connection>('GET', `/api/v1/connections/${id}/`).then((row) => `${platformLabel(row.platform)} · ${row.account_name}`);
    name = name.catch(() => `${kind} ${id}`);
    names.set(key, name);
  }
  return name;
}

export function Name(props: { kind: 'audience' | 'connection'; id: number }) {
  const [name, setName] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    void nameOf(props.kind, props.id).then((value) => current && setName(value));
    return () => {
      current = false;
    };
  }, [props.kind, props.id]);
  return <>{name ?? `${props.kind} ${props.id}`}</>;
}

/** The rows of a list of runs that both the Syncs page and an audience's page show. */
export const RUN_COLUMNS = {
  run: {
    label: 'Run',
    cell: (run: SyncRun) => (
      <a class="run-link" href={`${SYNCS_APP}/${run.id}`}>
        Run {run.id}
      </a>
    ),
  },
  audience: {
    label: 'Audience',
    cell: (run: SyncRun) => (
      <a href={`/app/audiences/${run.audience}`}>
        <Name kind="audience" id={run.audience} />
      </a>
    ),
  },
  destination: { label: 'Destination', cell: (run: SyncRun) => <Name kind="connection" id={run.connection} /> },
  trigger: { label: 'Trigger', cell: triggerWords },
  status: { label: 'Status', cell: (run: SyncRun) => <SyncStatus status={run.status} /> },
  counts: {
    label: 'Added / removed / failed',
    numeric: true,
    cell: (run: SyncRun) =>
      run.dry_run
        ? `would add ${(run.planned_add ?? 0).toLocaleString()}, remove ${(run.planned_remove ?? 0).toLocaleString()}`
        : `${run.added.toLocaleString()} / ${run.removed.toLocaleString()} / ${run.failed.toLocaleString()}`,
  },
  matchRate: { label: 'Match rate', numeric: true, cell: (run: SyncRun) => percent(run.match_rate) },
  queued: { label: 'Queued', cell: (run: SyncRun) => formatDate(run.queued_at) },
  finished: { label: 'Finished', cell: (run: SyncRun) => formatDate(run.finished_at) },
};

export function SyncsPage() {
  const [version, setVersion] = useState(0);
  const [active, setActive] = useState(false);
  // While a listed run is in progress the list is read again, so its end shows without a reload.
  useEffect(() => {
    if (!active) return;
    const timer = setTimeout(() => setVersion((value) => value + 1), ACTIVE_POLL_MS);
    return () => clearTimeout(timer);
  }, [active, version]);
  return (
    <>
      <PageHeader
        title="Syncs"
        description="Each run sends an audience’s changes to one destination: who joined, who left, and what the platform made of them."
      />
      <ResourceList<SyncRun>
        apiPath={API}
        appPath={SYNCS_APP}
        caption="Sync runs"
        version={version}
        onPage={(page: Page<SyncRun>) => setActive(page.results.some((run) => !runFinished(run)))}
        searchable={false}
        filters={[
          { name: 'audience', label: 'Audience', reference: AUDIENCES },
          { name: 'connection', label: 'Destination', reference: CONNECTIONS },
          { name: 'status', label: 'Status', options: SYNC_STATUSES.map((value) => ({ value, label: SYNC_STATUS_LABELS[value] })) },
        ]}
        orderings={[{ value: 'id', label: 'Oldest first' }]}
        columns={[
          RUN_COLUMNS.run,
          RUN_COLUMNS.audience,
          RUN_COLUMNS.destination,
          RUN_COLUMNS.trigger,
          RUN_COLUMNS.status,
          RUN_COLUMNS.counts,
          RUN_COLUMNS.matchRate,
          RUN_COLUMNS.queued,
          RUN_COLUMNS.finished,
        ]}
        empty={
          <EmptyState title="No syncs yet">
            <p>
              An active audience with destinations syncs after its members change, on a schedule, and when you press Sync now on its page.
            </p>
          </EmptyState>
        }
      />
    </>
  );
}

/** A run read again every second until it has ended; `id` null reads nothing. */
function useRun(id: string | null): { run: SyncRun | null; problem: Problem | null; setRun: (run: SyncRun) => void } {
  const { value, problem, setValue } = usePolled<SyncRun>(id === null ? null : `${API}${id}/`, runFinished, ACTIVE_POLL_MS);
  return { run: value, problem, setRun: setValue };
}

export function SyncPage() {
  const { params } = useRoute();
  const { canWrite } = useSession();
  // Only a number reaches the API's path: anything else in the address is a page not found, not a request.
  const valid = /^[1-9]\d{0,15}$/.test(params.id ?? '');
  const { run, problem, setRun } = useRun(valid ? params.id! : null);
  const [cancelling, setCancelling] = useState(false);
  const [busy, setBusy] = useState(false);
  const [cancelProblem, setCancelProblem] = useState<Problem | null>(null);
  const [cancelled, setCancelled] = useState(false);

  const back = { href: SYNCS_APP, label: 'Back to the syncs' };
  if (!valid) return <NotFound what="There is no sync run at this address." back={back} />;
  if (problem?.status === 404) return <NotFound what="This sync run does not exist, or it is not in your workspace." back={back} />;

  const cancel = async () => {
    setBusy(true);
    setCancelProblem(null);
    try {
      setRun(await api<SyncRun>('POST', `${API}${params.id}/cancel/`));
      setCancelled(true);
      setCancelling(false);
    } catch (error) {
      if (error instanceof ProblemError) setCancelProblem(error.problem);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <PageHeader title={`Sync run ${params.id}`}>
        {run && canWrite && run.status === 'queued' ? (
          <button type="button" class="button button-danger" onClick={() => setCancelling(true)}>
            Cancel run
          </button>
        ) : null}
        <a class="button" href={SYNCS_APP}>
          All syncs
        </a>
      </PageHeader>
      <ProblemNotice problem={problem} />
      {cancelled ? <Notice kind="success">The run was cancelled.</Notice> : null}
      {!run && !problem ? <Loading /> : null}
      {run ? <RunDetail run={run} /> : null}
      <ConfirmDialog
        open={cancelling}
        title="Cancel this run?"
        confirmLabel="Cancel run"
        danger
        busy={busy}
        problem={cancelProblem}
        onConfirm={() => void cancel()}
        onCancel={() => setCancelling(false)}
      >
        <p>The run has not started: nothing has been sent. The next sync sends the difference as usual.</p>
      </ConfirmDialog>
    </>
  );
}

function RunDetail(props: { run: SyncRun }) {
  const { run } = props;
  const reasons = Object.entries(run.failed_by_reason).sort(([, a], [, b]) => b - a);
  const count = (value: number | null) => (value === null ? '—' : value.toLocaleString());
  return (
    <>
      <p class="meta">
        <a href={`/app/audiences/${run.audience}`}>
          <Name kind="audience" id={run.audience} />
        </a>{' '}
        to <Name kind="connection" id={run.connection} />
        {run.platform_audience_id ? `, platform list ${run.platform_audience_id}` : ''} · {triggerWords(run)}
      </p>
      <section class="panel" aria-labelledby="run-status-heading">
        <h2 id="run-status-heading">Status</h2>
        <p role="status" aria-live="polite">
          <SyncStatus status={run.status} /> {STATUS_WORDS[run.status]}.
        </p>
        {runFinished(run) ? null : <p class="reason">Checked again every second.</p>}
        {run.dry_run ? <p class="reason">A dry run counts what a sync would send, and sends nothing.</p> : null}
        {run.error_code ? (
          <Notice kind="error">
            <strong>{ERROR_WORDS[run.error_code] ?? run.error_code}</strong>
            {/* The platform's own message, or the service's: kept as it came, for a support request. */}
            {run.error_detail ? <span class="error-detail"> Detail: {run.error_detail}</span> : null}
          </Notice>
        ) : null}
        <dl class="facts">
          <dt>Attempts</dt>
          <dd>{run.attempts.toLocaleString()}</dd>
          <dt>Queued</dt>
          <dd>{formatDate(run.queued_at)}</dd>
          <dt>Started</dt>
          <dd>{formatDate(run.started_at)}</dd>
          <dt>Finished</dt>
          <dd>{formatDate(run.finished_at)}</dd>
        </dl>
      </section>
      <section class="panel" aria-labelledby="run-counts-heading">
        <h2 id="run-counts-heading">Counts</h2>
        <dl class="facts">
          <dt>Planned additions</dt>
          <dd>{count(run.planned_add)}</dd>
          <dt>Planned removals</dt>
          <dd>{count(run.planned_remove)}</dd>
          <dt>Added</dt>
          <dd>{count(run.added)}</dd>
          <dt>Removed</dt>
          <dd>{count(run.removed)}</dd>
          <dt>Failed</dt>
          <dd>{count(run.failed)}</dd>
          <dt>Skipped for consent</dt>
          <dd>{count(run.skipped_consent)}</dd>
          <dt>Skipped, nothing to match on</dt>
          <dd>{count(run.skipped_unmatchable)}</dd>
          <dt>Match rate</dt>
          <dd>{percent(run.match_rate)}</dd>
        </dl>
        <p class="reason">
          People whose consent to ad data or ad personalization is denied are sent nowhere, and removed where they were. People with no key
          this platform matches on are skipped.
        </p>
      </section>
      <section class="panel" aria-labelledby="run-failures-heading">
        <h2 id="run-failures-heading">Failed members by reason</h2>
        {reasons.length === 0 ? (
          <p class="reason">No member failed.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Failed members by reason</caption>
              <thead>
                <tr>
                  <th scope="col">Reason</th>
                  <th scope="col" class="numeric">
                    Members
                  </th>
                </tr>
              </thead>
              <tbody>
                {reasons.map(([reason, members]) => (
                  <tr key={reason}>
                    <th scope="row">{failureWords(reason)}</th>
                    <td class="numeric">{members.toLocaleString()}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
