import { useId, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { type Problem, ProblemError, upload } from '../api/client';
import type { Import, ImportRowError } from '../api/types';
import { EmptyState, formatDate, Loading, Notice, NotFound, PageHeader, ProblemNotice, StatusBadge } from '../components/feedback';
import { ResourceList } from '../components/resource-list';
import { usePolled } from '../components/use-polled';
import { useSession } from '../session';

const API = '/api/v1/imports/';
const APP = '/app/imports';
/** An import's merge is a background job: once a second is often enough to see it move without loading the service. */
const POLL_MS = 1000;

/** Keyed by the document's statuses, so a status the service adds fails the type check here until it has words. */
const STATUS_WORDS: Record<Import['status'], string> = {
  queued: 'Queued: the file is stored and waits for the merge',
  processing: 'Processing: the accepted rows are being merged',
  succeeded: 'Succeeded: every accepted row was applied',
  failed: 'Failed: nothing was applied',
};

const STATUS_LABELS: Record<Import['status'], string> = {
  queued: 'Queued',
  processing: 'Processing',
  succeeded: 'Succeeded',
  failed: 'Failed',
};

/**
 * The codes an import answers (openapi.json, ImportRowErrorDto) in words; a code not here is
 * shown as it is, so a new one is still visible and searchable in the documentation.
 */
const CODE_WORDS: Record<string, string> = {
  invalid_email: 'Invalid email address',
  invalid_phone: 'Invalid phone number',
  invalid_name: 'Invalid first or last name',
  invalid_country_code: 'Invalid country code',
  invalid_postal_code: 'Invalid postal code',
  invalid_mobile_ad_id: 'Invalid mobile ad id',
  invalid_sha256: 'Invalid SHA-256 hash',
  invalid_identifiers: 'Invalid identifiers',
  missing_external_id: 'No external id, and no email or phone to derive one from',
  invalid_external_id: 'Invalid external id',
  duplicate_external_id: 'External id repeated in the file',
  invalid_traits: 'Invalid traits',
  too_many_traits: 'More than 100 traits',
  invalid_trait_key: 'Invalid trait name',
  invalid_trait_value: 'Trait value of the wrong type',
  invalid_consent: 'Consent not granted, denied or empty',
  wrong_column_count: 'Wrong number of columns',
  invalid_json: 'Not valid JSON',
  invalid_string: 'Not valid text',
  not_csv_or_ndjson: 'The file is neither CSV nor NDJSON',
  no_usable_column: 'The header row names no usable column',
  duplicate_column: 'A column is named twice in the header row',
  too_many_columns: 'Too many columns',
  record_too_large: 'A row is too large',
  malformed_csv: 'The CSV is malformed',
  merge_failed: 'The merge failed on the service; try again',
};

/** What each mode of an audience import does (SPEC 10.2), said where it is chosen and where an import is shown. */
export const MODE_WORDS: Record<NonNullable<Import['mode']>, string> = {
  add: 'the file’s people join the audience; members not in it stay',
  remove: 'the file’s people leave the audience',
  replace: 'the file’s people become the members; members not in it leave, in the same step',
};

const wordsOf = (code: string) => CODE_WORDS[code] ?? code;
export const finished = (row: Import) => row.status === 'succeeded' || row.status === 'failed';

const IDENTIFIER_COLUMNS = [
  'email',
  'phone',
  'first_name',
  'last_name',
  'country_code',
  'postal_code',
  'mobile_ad_id',
  'email_sha256',
  'phone_sha256',
];

export function ImportsPage() {
  const { canWrite } = useSession();
  return (
    <>
      <PageHeader
        title="Imports"
        description="Import people from a CSV file. Identifiers are hashed as the file arrives; only the hashes are kept."
      />
      {canWrite ? <UploadForm /> : null}
      <h2>Recent imports</h2>
      <ResourceList<Import>
        apiPath={API}
        appPath={APP}
        caption="Recent imports"
        filters={[]}
        searchable={false}
        orderings={[{ value: 'id', label: 'Oldest first' }]}
        columns={[
          { label: 'Import', cell: (row) => <a href={`${APP}/${row.id}`}>Import {row.id}</a> },
          { label: 'Status', cell: (row) => <StatusBadge status={row.status} label={STATUS_LABELS[row.status]} /> },
          { label: 'Rows', cell: (row) => row.rows_total.toLocaleString(), numeric: true },
          { label: 'Accepted', cell: (row) => row.rows_accepted.toLocaleString(), numeric: true },
          { label: 'Rejected', cell: (row) => row.rows_rejected.toLocaleString(), numeric: true },
          { label: 'Uploaded', cell: (row) => formatDate(row.created_at) },
        ]}
        empty={
          <EmptyState title="No imports yet">
            <p>{canWrite ? 'Choose a CSV file above to import people.' : 'Editors and admins can import people from a CSV file.'}</p>
          </EmptyState>
        }
      />
    </>
  );
}

export function HeaderHelp() {
  return (
    <details class="hint-panel" open>
      <summary>What the header row names</summary>
      <ul>
        <li>
          <code>external_id</code>: your id for the person. Without it, one is derived from the email or phone.
        </li>
        <li>
          Identifiers: {IDENTIFIER_COLUMNS.map((name, index) => [index > 0 ? ', ' : '', <code key={name}>{name}</code>])}. At least one of
          them, or an <code>external_id</code>, in every row.
        </li>
        <li>
          <code>consent_ad_user_data</code> and <code>consent_ad_personalization</code>: <code>granted</code>, <code>denied</code>, or
          empty.
        </li>
        <li>
          Every other column is a trait, kept as text unless its name ends in <code>:number</code> or <code>:boolean</code> (for example{' '}
          <code>ltv:number</code>).
        </li>
      </ul>
      <p>
        Example: <code>external_id,email,phone,consent_ad_user_data,plan,ltv:number</code>
      </p>
    </details>
  );
}

function UploadForm() {
  const location = useLocation();
  const inputId = useId();
  const [file, setFile] = useState<File | null>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);

  const send = async () => {
    setProblem(null);
    if (!file) {
      setProblem({ status: 400, code: 'no_file', detail: 'Choose a CSV file to import.' });
      return;
    }
    setBusy(true);
    try {
      const created = await upload<Import>(`${API}?target=people`, file, 'text/csv');
      location.route(`${APP}/${created.id}`);
    } catch (error) {
      if (error instanceof ProblemError) setProblem(error.problem);
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby={`${inputId}-heading`}>
      <h2 id={`${inputId}-heading`}>Import people</h2>
      <form
        class="form"
        aria-label="Import people"
        onSubmit={(event) => {
          event.preventDefault();
          if (!busy) void send();
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
            A header row, then one person a row. People already here, by external id, are updated.
          </p>
        </div>
        <HeaderHelp />
        <ProblemNotice problem={problem} />
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={busy}>
            {busy ? 'Uploading…' : 'Upload and import'}
          </button>
        </div>
      </form>
    </section>
  );
}

/**
 * An import read again every second until it has finished: what its page and an audience's upload
 * show. `id` null reads nothing.
 */
export function useImport(id: string | null): { row: Import | null; problem: Problem | null } {
  const { value, problem } = usePolled<Import>(id === null ? null : `${API}${id}/`, finished, POLL_MS);
  return { row: value, problem };
}

export function ImportPage() {
  const { params } = useRoute();
  // Only a number reaches the API's path: anything else in the address is a page not found, not a request.
  const valid = /^[1-9]\d{0,15}$/.test(params.id ?? '');
  const { row, problem } = useImport(valid ? params.id! : null);

  const back = { href: APP, label: 'Back to the imports' };
  if (!valid) return <NotFound what="There is no import at this address." back={back} />;
  if (problem?.status === 404) return <NotFound what="This import does not exist, or it is not in your workspace." back={back} />;
  return (
    <>
      <PageHeader title={`Import ${params.id}`}>
        <a class="button" href={APP}>
          All imports
        </a>
      </PageHeader>
      <ProblemNotice problem={problem} />
      {!row && !problem ? <Loading /> : null}
      {row?.target === 'audience' && row.audience !== null ? (
        <p class="meta">
          Members of <a href={`/app/audiences/${row.audience}`}>audience {row.audience}</a>, mode {row.mode}:{' '}
          {MODE_WORDS[row.mode ?? 'add']}
        </p>
      ) : null}
      {row ? <ImportProgress row={row} /> : null}
    </>
  );
}

export function ImportProgress(props: { row: Import }) {
  const { row } = props;
  const fileErrors = row.errors_sample.filter((sample) => sample.errors.file);
  const lineErrors = row.errors_sample.filter((sample) => !sample.errors.file);
  const reasons = Object.entries(row.rejected_by_reason).sort(([, a], [, b]) => b - a);
  return (
    <>
      <section class="panel" aria-labelledby="progress-heading">
        <h2 id="progress-heading">Progress</h2>
        <p role="status" aria-live="polite">
          <StatusBadge status={row.status} label={STATUS_LABELS[row.status]} /> {STATUS_WORDS[row.status]}.
        </p>
        {finished(row) ? null : <p class="reason">Checked again every second.</p>}
        <dl class="facts">
          <dt>Rows read</dt>
          <dd>{row.rows_total.toLocaleString()}</dd>
          <dt>Accepted</dt>
          <dd>{row.rows_accepted.toLocaleString()}</dd>
          <dt>Rejected</dt>
          <dd>{row.rows_rejected.toLocaleString()}</dd>
          <dt>Uploaded</dt>
          <dd>{formatDate(row.created_at)}</dd>
          <dt>Merge started</dt>
          <dd>{formatDate(row.started_at)}</dd>
          <dt>Finished</dt>
          <dd>{formatDate(row.finished_at)}</dd>
        </dl>
      </section>
      {row.status === 'failed' ? (
        <Notice kind="error">
          <strong>The import failed and nothing was applied. </strong>
          {fileErrors.length > 0 ? fileErrors.flatMap((sample) => sample.errors.file!.map(wordsOf)).join('. ') + '.' : null}
        </Notice>
      ) : null}
      <section class="panel" aria-labelledby="reasons-heading">
        <h2 id="reasons-heading">Rejected rows by reason</h2>
        {reasons.length === 0 ? (
          <p class="reason">No row was rejected.</p>
        ) : (
          <>
            <p class="reason">A row with two problems counts under both.</p>
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Rejected rows by reason</caption>
                <thead>
                  <tr>
                    <th scope="col">Reason</th>
                    <th scope="col" class="numeric">
                      Rows
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {reasons.map(([code, count]) => (
                    <tr key={code}>
                      <th scope="row">{wordsOf(code)}</th>
                      <td class="numeric">{count.toLocaleString()}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </section>
      {lineErrors.length > 0 ? <ErrorsSample rows={lineErrors} total={row.rows_rejected} /> : null}
    </>
  );
}

function ErrorsSample(props: { rows: ImportRowError[]; total: number }) {
  return (
    <section class="panel" aria-labelledby="sample-heading">
      <h2 id="sample-heading">Rejected lines</h2>
      <p class="reason">
        {props.rows.length < props.total
          ? `The first ${props.rows.length} of ${props.total.toLocaleString()} rejected rows, by their line in the file (the header is line 1).`
          : 'Each rejected row by its line in the file (the header is line 1).'}
      </p>
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Rejected lines</caption>
          <thead>
            <tr>
              <th scope="col" class="numeric">
                Line
              </th>
              <th scope="col">Problems</th>
            </tr>
          </thead>
          <tbody>
            {props.rows.map((sample) => (
              <tr key={sample.line}>
                <th scope="row" class="numeric">
                  {sample.line}
                </th>
                <td>
                  <ul class="plain-list">
                    {Object.entries(sample.errors).map(([field, codes]) => (
                      <li key={field}>
                        {field === 'non_field_errors' ? '' : <code>{field}</code>}
                        {field === 'non_field_errors' ? '' : ': '}
                        {codes.map(wordsOf).join('; ')}
                      </li>
                    ))}
                  </ul>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
