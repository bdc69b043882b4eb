import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, type Problem, ProblemError, queryOf, upload } from '../api/client';
import { AUDIENCE_SOURCE_TYPES, AUDIENCE_STATUSES } from '../api/enums';
import { AUDIENCE_TRANSITIONS } from '../api/status-transitions';
import { PLATFORMS, platformLabel } from '../api/platforms';
import type { Audience, AudienceDestination, AudienceDetail, Connection, Import, Page, Person, SyncRun, SyncRuns } from '../api/types';
import { formatDate, Loading, Notice, ProblemNotice, StatusBadge } from '../components/feedback';
import { Fact, FieldRow, NumberField, SelectField, TextArea, TextField, useReadOnlyFields } from '../components/fields';
import { idOrNull, parseJsonObject, textOf, useForm } from '../components/form';
import { enumOptions } from '../components/lookups';
import { ReferenceField, ReferenceListField } from '../components/reference-picker';
import { CONNECTIONS, MODELS, SIGNALS } from '../components/references';
import { ResourceForm } from '../components/form-problem';
import { ResourceEditor } from '../components/resource-editor';
import { ResourceIndex } from '../components/resource-index';
import { RulesEditor, RulesInWords } from '../components/rules-editor';
import { errorsByNode, type GroupNode, parseRules, serializeRules } from '../components/rules-tree';
import { useSession } from '../session';
import { finished, HeaderHelp, ImportProgress, MODE_WORDS, useImport } from './imports';
import { startFlow } from './connections';
import { MatchedKeys } from './people';
import { percent, RUN_COLUMNS, runFinished, SYNC_STATUS_LABELS, SyncStatus, SYNCS_APP } from './syncs';

const API = '/api/v1/audiences/';
const APP = '/app/audiences';
/** A recompute is a background job (debounced, MEMBERSHIP_DEBOUNCE_SECONDS): the page looks again every second while one is due. */
const POLL_MS = 1000;
/** …for two minutes at most: past that, the job is late or will not come, and a reload checks again. */
const POLL_LIMIT = 120;
const MEMBERS_PAGE_SIZE = 20;

export function AudiencesPage() {
  return (
    <ResourceIndex<Audience>
      title="Audiences"
      description="Groups of people to target: by rules, by a model’s scores, or uploaded."
      noun="audience"
      apiPath={API}
      appPath={APP}
      filters={[
        { name: 'status', label: 'Status', options: enumOptions(AUDIENCE_STATUSES) },
        { name: 'source_type', label: 'Source', options: enumOptions(AUDIENCE_SOURCE_TYPES) },
        { name: 'model_instance', label: 'Model', reference: MODELS },
      ]}
      columns={[
        { label: 'Source', cell: (row) => row.source_type },
        { label: 'Status', cell: (row) => <StatusBadge status={row.status} /> },
        { label: 'Size', numeric: true, cell: (row) => (row.size === null ? '—' : row.size.toLocaleString()) },
      ]}
      emptyText="An audience says who to reach: people matching rules, scored by a model, or an uploaded list."
    />
  );
}

export function AudiencePage() {
  const { params } = useRoute();
  // Bumped when the members changed (a recompute seen, an upload finished): the size and the list are read again.
  const [version, setVersion] = useState(0);
  const changed = () => setVersion((value) => value + 1);
  return (
    <ResourceEditor<Audience>
      // A new object page per id: creating moves from /new to /<id> with fresh state.
      key={params.id}
      id={params.id}
      apiPath={API}
      appPath={APP}
      noun="audience"
      titleOf={(row) => row.name}
      status={(row) => ({ value: row.status, label: row.status })}
      transitions={(row) => AUDIENCE_TRANSITIONS[row.status]}
      readOnly={(row) => row.status === 'archived'}
      blockers={(row) => [{ source: SIGNALS, param: 'audience', id: row.id }]}
      form={(args) => <AudienceForm {...args} />}
      summary={(row) => <MembershipOutcome row={row} version={version} onComputed={changed} />}
    >
      {(row) => (
        <>
          <AudienceDestinations row={row} version={version} />
          <AudienceMembers row={row} version={version} onChanged={changed} />
        </>
      )}
    </ResourceEditor>
  );
}

/** Whether the stored rules follow the grammar (SPEC 10.2); an audience whose rules do not is not computed. */
const rulesReadable = (row: Audience) => parseRules(row.rules) !== null;

/** Whether the service computes the audience's members: an archived one is frozen, and one whose rules must be fixed is not computed. */
const computable = (row: Audience) => row.status !== 'archived' && (row.source_type !== 'rules' || rulesReadable(row));

/** JSON with sorted keys: the same rules compare equal whatever order their keys came in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** What the members depend on (the service's MEMBERSHIP_INPUTS): a change of one of them enqueues a recompute. */
const inputsOf = (row: Audience) => canonical([row.rules, row.source_type, row.model_instance, row.min_score, row.status]);

/** "just now", "2 minutes ago", "yesterday": how long ago, in words. */
export function timeAgo(iso: string, now = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  if (Math.abs(seconds) < 60) return 'just now';
  const format = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
  if (Math.abs(seconds) < 3600) return format.format(Math.round(seconds / 60), 'minute');
  if (Math.abs(seconds) < 86400) return format.format(Math.round(seconds / 3600), 'hour');
  return format.format(Math.round(seconds / 86400), 'day');
}

/**
 * The audience's size and when it was computed ("1,234 members, computed 2 minutes ago"). A
 * recompute is a job that follows a change of the audience's inputs (or its creation): while one
 * is due, the audience is read again every second, so an edit shows its outcome without a reload.
 */
function MembershipOutcome(props: { row: Audience; version: number; onComputed: () => void }) {
  const { row } = props;
  const [latest, setLatest] = useState(row);
  const [, setTick] = useState(0);
  const [gaveUp, setGaveUp] = useState(false);
  // The computation last seen, across reads: a new one is reported once, so the members list follows it.
  const seen = useRef(row.members_updated_at);
  // The row as it was, and since when (its updated_at) a recompute is awaited after its inputs changed.
  const previous = useRef(row);
  const [awaitedSince, setAwaitedSince] = useState<string | null>(null);

  useEffect(() => {
    setLatest(row);
    if (inputsOf(previous.current) !== inputsOf(row)) setAwaitedSince(row.updated_at);
    previous.current = row;
  }, [row]);

  const isDue = (answer: Audience) =>
    computable(row) && (answer.members_updated_at === null || (awaitedSince !== null && answer.members_updated_at < awaitedSince));

  useEffect(() => {
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let tries = 0;
    setGaveUp(false);
    const read = () =>
      api<Audience>('GET', `${API}${row.id}/`).then(
        (answer) => {
          if (!current) return;
          setLatest(answer);
          if (answer.members_updated_at !== seen.current) {
            seen.current = answer.members_updated_at;
            props.onComputed();
          }
          if (!isDue(answer)) return;
          if (++tries >= POLL_LIMIT) setGaveUp(true);
          else timer = setTimeout(read, POLL_MS);
        },
        () => undefined,
      );
    const due = isDue(latest);
    if (due || props.version > 0) timer = setTimeout(read, due ? POLL_MS : 0);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [row, props.version, awaitedSince]);

  // "2 minutes ago" stays true: the words are written again every half minute.
  useEffect(() => {
    const interval = setInterval(() => setTick((tick) => tick + 1), 30_000);
    return () => clearInterval(interval);
  }, []);

  const due = isDue(latest);
  let text: string;
  if (row.source_type === 'rules' && !rulesReadable(row)) text = 'Not computed: the rules must be fixed first.';
  else if (latest.size === null || latest.members_updated_at === null) text = 'Not computed yet.';
  else
    text = `${latest.size.toLocaleString()} ${latest.size === 1 ? 'member' : 'members'}, computed ${timeAgo(latest.members_updated_at)}.`;
  return (
    <p class="outcome" role="status" aria-live="polite">
      {latest.members_updated_at ? (
        <time dateTime={latest.members_updated_at} title={new Date(latest.members_updated_at).toLocaleString()}>
          {text}
        </time>
      ) : (
        text
      )}
      {due && !gaveUp ? <span class="reason"> Computing the members…</span> : null}
      {due && gaveUp ? <span class="reason"> Not computed again yet: reload the page to check.</span> : null}
    </p>
  );
}

/** A few of a person's traits, by name, in one line: enough to recognise a member. */
function TraitsLine(props: { traits: Person['traits'] }) {
  const entries = Object.entries(props.traits).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length === 0) return <span class="reason">None</span>;
  const shown = entries.slice(0, 3).map(([key, value]) => `${key}: ${String(value)}`);
  return <span>{shown.join(', ') + (entries.length > 3 ? `, and ${entries.length - 3} more` : '')}</span>;
}

/** The members as people (their external id, matched keys and a few traits), a page at a time, and the upload for an upload audience. */
function AudienceMembers(props: { row: Audience; version: number; onChanged: () => void }) {
  const { row } = props;
  const { canWrite } = useSession();
  const [pageNumber, setPageNumber] = useState(1);
  const [page, setPage] = useState<Page<Person> | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);

  useEffect(() => {
    let current = true;
    setProblem(null);
    const query = queryOf({ ordering: 'external_id', page: pageNumber > 1 ? pageNumber : undefined, page_size: MEMBERS_PAGE_SIZE });
    api<Page<Person>>('GET', `${API}${row.id}/members/${query}`).then(
      (answer) => current && setPage(answer),
      (error: unknown) => {
        if (!current) return;
        // Members left meanwhile and this page is past the end: back to the first.
        if (error instanceof ProblemError && error.problem.status === 404 && pageNumber > 1) setPageNumber(1);
        else if (error instanceof ProblemError) setProblem(error.problem);
      },
    );
    return () => {
      current = false;
    };
  }, [row.id, pageNumber, props.version]);

  const pages = page ? Math.max(1, Math.ceil(page.count / MEMBERS_PAGE_SIZE)) : 1;
  const first = page && page.count > 0 ? (pageNumber - 1) * MEMBERS_PAGE_SIZE + 1 : 0;
  const last = page ? first + page.results.length - 1 : 0;
  const empty =
    row.source_type === 'upload'
      ? canWrite && row.status !== 'archived'
        ? 'No members yet: upload a CSV file of people below.'
        : 'No members yet: they are added by uploading a file of people.'
      : row.source_type === 'model'
        ? 'No members: nobody has a score from the model at or above the minimum score yet.'
        : 'No members: nobody matches these rules, or they have not been computed yet.';

  return (
    <section class="panel" aria-labelledby="members-heading">
      <h2 id="members-heading">Members</h2>
      <ProblemNotice problem={problem} />
      {!page && !problem ? <Loading /> : null}
      {page && page.count === 0 ? <p class="reason">{empty}</p> : null}
      {page && page.count > 0 ? (
        <>
          <p>
            {first.toLocaleString()}–{last.toLocaleString()} of {page.count.toLocaleString()} {page.count === 1 ? 'member' : 'members'}, by
            external id.
          </p>
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Members</caption>
              <thead>
                <tr>
                  <th scope="col">External id</th>
                  <th scope="col">Matched keys</th>
                  <th scope="col">Traits</th>
                </tr>
              </thead>
              <tbody>
                {page.results.map((person) => (
                  <tr key={person.id}>
                    <td>
                      <a href={`/app/people/${person.id}`}>{person.external_id}</a>
                    </td>
                    <td>
                      <MatchedKeys keys={person.matched_keys} />
                    </td>
                    <td>
                      <TraitsLine traits={person.traits} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {pages > 1 ? (
            <nav class="pager" aria-label="Pages of members">
              <span>
                Page {pageNumber} of {pages}
              </span>
              <button type="button" class="button" disabled={!page.previous} onClick={() => setPageNumber(pageNumber - 1)}>
                Previous
              </button>
              <button type="button" class="button" disabled={!page.next} onClick={() => setPageNumber(pageNumber + 1)}>
                Next
              </button>
            </nav>
          ) : null}
        </>
      ) : null}
      {row.source_type === 'upload' && canWrite && row.status !== 'archived' ? (
        <MembersUpload row={row} onFinished={props.onChanged} />
      ) : null}
    </section>
  );
}

type Mode = NonNullable<Import['mode']>;
const MODES: { value: Mode; label: string }[] = [
  { value: 'add', label: 'Add' },
  { value: 'remove', label: 'Remove' },
  { value: 'replace', label: 'Replace' },
];

/**
 * An upload audience's members from a CSV file (SPEC 10.2, an import with `target=audience`): add
 * the file's people, remove them, or replace the members with them; then the import's progress
 * and outcome, as the Import page shows them.
 */
function MembersUpload(props: { row: Audience; onFinished: () => void }) {
  const inputId = useId();
  const [file, setFile] = useState<File | null>(null);
  const [mode, setMode] = useState<Mode>('add');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [importId, setImportId] = useState<string | null>(null);
  const current = useImport(importId);
  const reported = useRef<string | null>(null);

  useEffect(() => {
    if (current.row && finished(current.row) && reported.current !== importId) {
      reported.current = importId;
      props.onFinished();
    }
  }, [current.row]);

  const send = async () => {
    setProblem(null);
    if (!file) {
      setProblem({ status: 400, code: 'no_file', detail: 'Choose a CSV file to upload.' });
      return;
    }
    setBusy(true);
    try {
      const created = await upload<Import>(
        `/api/v1/imports/${queryOf({ target: 'audience', audience: props.row.id, mode })}`,
        file,
        'text/csv',
      );
      setImportId(String(created.id));
    } catch (error) {
      if (error instanceof ProblemError) setProblem(error.problem);
    } finally {
      setBusy(false);
    }
  };

  const running = current.row !== null && !finished(current.row);
  return (
    <section aria-labelledby={`${inputId}-heading`}>
      <h3 id={`${inputId}-heading`}>Upload members</h3>
      <form
        class="form"
        aria-label="Upload members"
        onSubmit={(event) => {
          event.preventDefault();
          if (!busy && !running) void send();
        }}
      >
        <div class="field">
          <label for={inputId}>CSV file</label>
          <input
            id={inputId}
            type="file"
            accept=".csv,text/csv"
            aria-describedby={`${inputId}-hint`}
            onChange={(event) => setFile(event.currentTarget.files?.[0] ?? null)}
          />
          <p class="hint" id={`${inputId}-hint`}>
            A header row, then one person a row, as on the Imports page. People not here yet are created.
          </p>
        </div>
        <fieldset class="field">
          <legend>Mode</legend>
          {MODES.map((option) => (
            <label key={option.value} class="checkbox">
              <input
                type="radio"
                name={`${inputId}-mode`}
                value={option.value}
                checked={mode === option.value}
                onChange={() => setMode(option.value)}
              />
              <span>
                {option.label}: {MODE_WORDS[option.value]}
              </span>
            </label>
          ))}
        </fieldset>
        <HeaderHelp />
        <ProblemNotice problem={problem} />
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={busy || running}>
            {busy ? 'Uploading…' : running ? 'Importing…' : 'Upload members'}
          </button>
        </div>
      </form>
      {importId ? (
        <div aria-label="Upload" role="region">
          <p>
            <a href={`/app/imports/${importId}`}>Import {importId}</a>, mode {current.row?.mode ?? mode}.
          </p>
          <ProblemNotice problem={current.problem} />
          {current.row ? <ImportProgress row={current.row} /> : <Loading />}
        </div>
      ) : null}
    </section>
  );
}

/** While no run is in progress, the destinations are read again this often: syncs also start on their own after a change. */
const DESTINATIONS_IDLE_MS = 5000;
/** …and every second while one is. */
const DESTINATIONS_ACTIVE_MS = 1000;
const RECENT_RUNS = 10;

/**
 * Why a destination cannot sync as it is (AudienceDestinationDto `status_reason`), in words, with
 * what fixes it: Reconnect for a grant that lacks a permission or is gone, the Connections page
 * for the Customer Match terms only an admin accepts.
 */
function DestinationReason(props: { destination: AudienceDestination; name: string }) {
  const { canWrite, config } = useSession();
  const [problem, setProblem] = useState<Problem | null>(null);
  const [starting, setStarting] = useState(false);
  const { destination } = props;
  const reason = destination.status_reason;
  if (!reason) return null;
  const slug = PLATFORMS[destination.platform].slug;
  const reconnect =
    canWrite && config.ad_platforms.includes(slug) ? (
      <button
        type="button"
        class="button"
        disabled={starting}
        onClick={() => {
          setProblem(null);
          setStarting(true);
          startFlow(slug).catch((error: unknown) => {
            setStarting(false);
            if (error instanceof ProblemError) setProblem(error.problem);
          });
        }}
      >
        {starting ? 'Redirecting…' : 'Reconnect'}
        <span class="visually-hidden"> {props.name}</span>
      </button>
    ) : (
      <a href={`/app/connections${queryOf({ search: props.name })}`}>Open the connection</a>
    );
  const connectionLink = <a href={`/app/connections${queryOf({ search: props.name })}`}>Open the connection</a>;
  let words: string;
  let fix = reconnect;
  if (reason === 'scope_missing') words = 'This Google connection was granted without the Data Manager permission. Reconnect it.';
  else if (reason === 'terms_not_accepted') {
    words = 'An admin must accept Google’s Customer Match terms on this connection.';
    fix = connectionLink;
  } else if (reason === 'audience_flagged') {
    words = 'Meta flagged this audience and refuses changes to it: review it in Meta Ads Manager.';
    fix = connectionLink;
  } else if (reason === 'access_revoked' || reason === 'revoked') words = 'The access to this account was revoked. Reconnect it.';
  else if (reason === 'invalid_grant' || reason === 'token_expired' || reason === 'expired')
    words = 'The authorization of this account has expired. Reconnect it.';
  else {
    words = reason.replace(/_/g, ' ');
    fix = connectionLink;
  }
  return (
    <div class="reason">
      <p>{words}</p>
      {fix}
      <ProblemNotice problem={problem} />
    </div>
  );
}

/**
 * Where the audience goes (SPEC 10.3): each destination with its last run, when it last synced,
 * how many members it holds and their match rate; "Sync now" for editors and admins on an active
 * audience; and the audience's recent runs, read again while one is in progress (runs also start
 * on their own after a membership change, and those show here too).
 */
function AudienceDestinations(props: { row: Audience; version: number }) {
  const { row } = props;
  const { canWrite } = useSession();
  const [detail, setDetail] = useState<AudienceDetail | null>(null);
  const [runs, setRuns] = useState<SyncRun[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [actionProblem, setActionProblem] = useState<Problem | null>(null);
  const [started, setStarted] = useState<SyncRun[] | null>(null);
  const [busy, setBusy] = useState(false);
  const [reads, setReads] = useState(0);
  const [names, setNames] = useState<Record<number, string>>({});

  useEffect(() => {
    let current = true;
    setProblem(null);
    Promise.all([
      api<AudienceDetail>('GET', `${API}${row.id}/`),
      api<Page<SyncRun>>('GET', `/api/v1/syncs/${queryOf({ audience: row.id, page_size: RECENT_RUNS })}`),
    ]).then(
      ([audience, page]) => {
        if (!current) return;
        setDetail(audience);
        setRuns(page.results);
      },
      (error: unknown) => {
        if (current && error instanceof ProblemError) setProblem(error.problem);
      },
    );
    return () => {
      current = false;
    };
  }, [row.id, row.updated_at, props.version, reads]);

  const destinations = detail?.destinations ?? [];
  const inProgress = (runs ?? []).some((run) => !runFinished(run));
  const live = detail?.status === 'active' && destinations.length > 0;
  // The next read: soon while a run is in progress; now and then on an active audience, whose syncs may start on their own.
  useEffect(() => {
    if (!detail || (!inProgress && !live)) return;
    const timer = setTimeout(() => setReads((value) => value + 1), inProgress ? DESTINATIONS_ACTIVE_MS : DESTINATIONS_IDLE_MS);
    return () => clearTimeout(timer);
  }, [detail, runs]);

  useEffect(() => {
    let current = true;
    for (const destination of destinations)
      if (!(destination.connection in names))
        api<Connection>('GET', `/api/v1/connections/${destination.connection}/`).then(
          (connection) => current && setNames((known) => ({ ...known, [connection.id]: connection.account_name })),
          () => undefined,
        );
    return () => {
      current = false;
    };
  }, [detail]);

  const sync = async (body: { connection?: number; dry_run?: boolean }) => {
    setBusy(true);
    setActionProblem(null);
    try {
      const answer = await api<SyncRuns>('POST', '/api/v1/syncs/', { audience: row.id, ...body });
      setStarted(answer.runs);
      setReads((value) => value + 1);
    } catch (error) {
      if (error instanceof ProblemError) setActionProblem(error.problem);
    } finally {
      setBusy(false);
    }
  };

  const nameOf = (id: number) => names[id] ?? `connection ${id}`;
  const canSync = canWrite && detail?.status === 'active';
  return (
    <section class="panel" aria-labelledby="destinations-heading">
      <h2 id="destinations-heading">Destinations and syncs</h2>
      <ProblemNotice problem={problem} />
      {!detail && !problem ? <Loading /> : null}
      {detail && destinations.length === 0 ? (
        <p class="reason">No destination yet: add a connection under Destinations above, and the audience syncs to it once active.</p>
      ) : null}
      {detail && destinations.length > 0 && detail.status !== 'active' ? (
        <p class="reason">Only an active audience syncs: activate it to send its members to these destinations.</p>
      ) : null}
      {detail && destinations.length > 0 ? (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Destinations</caption>
            <thead>
              <tr>
                <th scope="col">Destination</th>
                <th scope="col">Platform list</th>
                <th scope="col">Last run</th>
                <th scope="col">Last synced</th>
                <th scope="col" class="numeric">
                  Members sent
                </th>
                <th scope="col" class="numeric">
                  Match rate
                </th>
                {canSync ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {destinations.map((destination) => (
                <tr key={destination.connection}>
                  <th scope="row">
                    {nameOf(destination.connection)}
                    <br />
                    <small>{platformLabel(destination.platform)}</small>
                    <DestinationReason destination={destination} name={nameOf(destination.connection)} />
                  </th>
                  <td>{destination.platform_audience_id ?? '—'}</td>
                  <td>
                    {destination.last_run ? (
                      <a href={`${SYNCS_APP}/${destination.last_run.id}`}>
                        <SyncStatus status={destination.last_run.status} />
                        <span class="visually-hidden"> run {destination.last_run.id}</span>
                      </a>
                    ) : (
                      'Never synced'
                    )}
                  </td>
                  <td>{formatDate(destination.last_synced_at)}</td>
                  <td class="numeric">{destination.members_sent.toLocaleString()}</td>
                  <td class="numeric">{percent(destination.match_rate)}</td>
                  {canSync ? (
                    <td>
                      <button
                        type="button"
                        class="button"
                        disabled={busy}
                        onClick={() => void sync({ connection: destination.connection })}
                      >
                        Sync now<span class="visually-hidden"> to {nameOf(destination.connection)}</span>
                      </button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {canSync && destinations.length > 0 ? (
        <div class="actions">
          <button type="button" class="button button-primary" disabled={busy} onClick={() => void sync({})}>
            Sync all now
          </button>
          <button type="button" class="button" disabled={busy} onClick={() => void sync({ dry_run: true })}>
            Dry run
          </button>
        </div>
      ) : null}
      <ProblemNotice problem={actionProblem} />
      {started ? (
        <Notice kind="info">
          {started.map((run, index) => (
            <span key={run.id}>
              {index > 0 ? ' ' : ''}
              <a href={`${SYNCS_APP}/${run.id}`}>Run {run.id}</a> {run.dry_run ? '(dry run) ' : ''}to {nameOf(run.connection)}:{' '}
              {SYNC_STATUS_LABELS[runs?.find((seen) => seen.id === run.id)?.status ?? run.status].toLowerCase()}.
            </span>
          ))}
        </Notice>
      ) : null}
      {runs && runs.length > 0 ? (
        <>
          <h3>Recent runs</h3>
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Recent runs</caption>
              <thead>
                <tr>
                  {RECENT_COLUMNS.map((column) => (
                    <th key={column.label} scope="col" class={'numeric' in column ? 'numeric' : undefined}>
                      {column.label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {runs.map((run) => (
                  <tr key={run.id}>
                    {RECENT_COLUMNS.map((column) => (
                      <td key={column.label} class={'numeric' in column ? 'numeric' : undefined}>
                        {column.cell(run)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p>
            <a href={`${SYNCS_APP}${queryOf({ audience: row.id })}`}>Every run of this audience</a>
          </p>
        </>
      ) : null}
    </section>
  );
}

const RECENT_COLUMNS = [
  RUN_COLUMNS.run,
  RUN_COLUMNS.destination,
  RUN_COLUMNS.trigger,
  RUN_COLUMNS.status,
  RUN_COLUMNS.counts,
  RUN_COLUMNS.matchRate,
  RUN_COLUMNS.queued,
  RUN_COLUMNS.finished,
];

/** The rules as the form holds them: the editor's tree, or JSON being edited as text. */
type RulesDraft = { mode: 'editor'; root: GroupNode } | { mode: 'json'; text: string };

const draftOf = (rules: Audience['rules']): RulesDraft => {
  const root = parseRules(rules);
  return root ? { mode: 'editor', root } : { mode: 'json', text: JSON.stringify(rules, null, 2) };
};

function AudienceForm(props: { row: Audience | null; readOnly: boolean; onSaved: (row: Audience) => void }) {
  const { row } = props;
  const form = useForm({
    name: row?.name ?? '',
    description: row?.description ?? '',
    source_type: row?.source_type ?? 'rules',
    model_instance: textOf(row?.model_instance),
    min_score: textOf(row?.min_score),
    connections: (row?.connections ?? []).map(String),
    rules: draftOf(row?.rules ?? {}) as RulesDraft,
  });
  const { values, set } = form;
  const byModel = values.source_type === 'model';
  // The JSON's paths to the editor's rows, as last sent: the API's `rules.all.2.op` finds its row by them.
  const sentPaths = useRef(new Map<string, string>());
  // Only rules audiences use rules; another's are shown only when it has some, so they can still be fixed.
  const storedRules = row !== null && Object.keys(row.rules).length > 0;
  const showRules = values.source_type === 'rules' || storedRules;

  const rulesBody = (): Record<string, unknown> => {
    const draft = values.rules;
    if (draft.mode === 'json') return parseJsonObject(draft.text, 'rules');
    const serialized = serializeRules(draft.root);
    sentPaths.current = serialized.paths;
    if (Object.keys(serialized.errors).length > 0)
      throw new ProblemError({ status: 400, code: 'validation_error', detail: 'Some fields are invalid.', errors: serialized.errors });
    return serialized.json;
  };

  const save = () =>
    form.submit(async () => {
      const body = {
        name: values.name,
        description: values.description,
        source_type: values.source_type,
        model_instance: byModel ? idOrNull(values.model_instance) : null,
        min_score: byModel && values.min_score !== '' ? Number(values.min_score) : null,
        connections: values.connections.map(Number),
        ...(showRules ? { rules: rulesBody() } : {}),
      };
      props.onSaved(row ? await api<Audience>('PATCH', `${API}${row.id}/`, body) : await api<Audience>('POST', API, body));
    });

  return (
    <ResourceForm
      label={row ? 'Edit audience' : 'New audience'}
      form={form}
      readOnly={props.readOnly}
      submitLabel={row ? 'Save changes' : 'Create audience'}
      cancelHref={APP}
      onSubmit={() => void save()}
    >
      <TextField label="Name" {...form.bind('name')} required maxLength={255} />
      <TextArea label="Description" {...form.bind('description')} maxLength={2000} />
      <SelectField label="Source" {...form.bind('source_type')} required options={enumOptions(AUDIENCE_SOURCE_TYPES)} />
      {byModel ? (
        <FieldRow>
          <ReferenceField label="Model" {...form.bind('model_instance')} source={MODELS} required />
          <NumberField
            label="Minimum score"
            {...form.bind('min_score')}
            hint="Between 0 and 1; empty for none."
            min={0}
            max={1}
            step="any"
          />
        </FieldRow>
      ) : null}
      <ReferenceListField
        label="Destinations"
        name="connections"
        source={CONNECTIONS}
        values={values.connections}
        onValues={set('connections')}
        empty="No destination yet: add a connected ad account below."
        errors={form.errorsFor('connections')}
      />
      {showRules ? (
        <RulesField
          draft={values.rules}
          onDraft={set('rules')}
          storedInvalid={row !== null && parseRules(row.rules) === null}
          stored={row?.rules ?? {}}
          forOtherSource={values.source_type !== 'rules'}
          errors={form.problem?.errors}
          jsonErrors={form.errorsFor('rules')}
          paths={sentPaths.current}
        />
      ) : null}
    </ResourceForm>
  );
}

/**
 * The rules of the form: the editor, or the JSON as text (for those who write it, and for stored
 * rules the editor cannot show, which must be fixed there before the audience can be saved or
 * activated); read-only, the rules in words with their JSON.
 */
function RulesField(props: {
  draft: RulesDraft;
  onDraft: (draft: RulesDraft) => void;
  storedInvalid: boolean;
  stored: Audience['rules'];
  forOtherSource: boolean;
  errors: Record<string, string[]> | undefined;
  jsonErrors: string[] | undefined;
  paths: Map<string, string>;
}) {
  const headingId = useId();
  const [notice, setNotice] = useState<string | null>(null);
  const { draft } = props;
  const invalidNote =
    'These rules do not follow the rules grammar (written before it existed), so this audience is not computed, and it cannot be saved or activated until they are fixed. Fix the JSON below, or start again in the editor.';

  if (useReadOnlyFields()) {
    const root = parseRules(props.stored);
    return (
      <Fact label="Rules">
        {root ? (
          <RulesInWords root={root} />
        ) : (
          <p class="reason">These rules do not follow the rules grammar, so this audience is not computed until they are fixed.</p>
        )}
        <pre class="code">{JSON.stringify(props.stored, null, 2)}</pre>
      </Fact>
    );
  }

  const toJson = () => {
    if (draft.mode !== 'editor') return;
    setNotice(null);
    props.onDraft({ mode: 'json', text: JSON.stringify(serializeRules(draft.root).json, null, 2) });
  };
  const toEditor = () => {
    if (draft.mode !== 'json') return;
    let parsed: unknown;
    try {
      parsed = draft.text.trim() === '' ? {} : JSON.parse(draft.text);
    } catch {
      setNotice('This is not valid JSON, so the editor cannot show it: fix it here first.');
      return;
    }
    const root = parseRules(parsed);
    if (!root) {
      setNotice('This JSON does not follow the rules grammar, so the editor cannot show it: fix it here first.');
      return;
    }
    setNotice(null);
    props.onDraft({ mode: 'editor', root });
  };

  const byNode = draft.mode === 'editor' ? errorsByNode(props.errors, props.paths, draft.root.key) : new Map();
  return (
    <section class="rules-field" aria-labelledby={headingId}>
      <h3 id={headingId}>Rules</h3>
      <p class="hint">
        {props.forOtherSource
          ? 'Only rules audiences select people by rules: these are kept, but not used by this audience.'
          : 'The people whose traits and consent meet these conditions are the members. A trait compares only with a value of its own type: the number 5 is not the text “5”.'}
      </p>
      {props.storedInvalid && draft.mode === 'json' ? <Notice kind="error">{invalidNote}</Notice> : null}
      {notice ? <Notice kind="error">{notice}</Notice> : null}
      {draft.mode === 'editor' ? (
        <>
          <RulesEditor root={draft.root} onRoot={(root) => props.onDraft({ mode: 'editor', root })} errors={byNode} />
          <details class="hint-panel">
            <summary>The JSON of these rules</summary>
            <pre class="code rules-json" tabIndex={0}>
              {JSON.stringify(serializeRules(draft.root).json, null, 2)}
            </pre>
          </details>
          <div class="actions">
            <button type="button" class="button" onClick={toJson}>
              Edit as JSON
            </button>
          </div>
        </>
      ) : (
        <>
          <TextArea
            label="Rules (JSON)"
            name="rules"
            value={draft.text}
            onValue={(text) => props.onDraft({ mode: 'json', text })}
            errors={props.jsonErrors}
            code
            rows={8}
            hint='The grammar of SPEC 10.2: {"all": [...]}, {"any": [...]}, {"not": {...}}, {"trait", "op", "value"} or {"consent", "op", "value"}; {} selects nobody. At most 64 KiB.'
          />
          <div class="actions">
            <button type="button" class="button" onClick={toEditor}>
              Use the editor
            </button>
            {props.storedInvalid ? (
              <button
                type="button"
                class="button"
                onClick={() => {
                  setNotice(null);
                  props.onDraft({ mode: 'editor', root: parseRules({})! });
                }}
              >
                Start again in the editor
              </button>
            ) : null}
          </div>
        </>
      )}
    </section>
  );
}
