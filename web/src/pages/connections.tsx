import { useEffect, useId, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, type Problem, ProblemError } from '../api/client';
import { CONNECTION_PLATFORMS, CONNECTION_STATUSES } from '../api/enums';
import { PLATFORMS, platformLabel } from '../api/platforms';
import type { Connection } from '../api/types';
import { ConfirmDialog, EmptyState, formatDate, Notice, PageHeader, ProblemNotice, StatusBadge } from '../components/feedback';
import { TextField } from '../components/fields';
import { FormProblem } from '../components/form-problem';
import { useForm } from '../components/form';
import { enumOptions } from '../components/lookups';
import { DeleteDialog } from '../components/delete-dialog';
import { ResourceList } from '../components/resource-list';
import { useSession } from '../session';

const API = '/api/v1/connections/';
const APP = '/app/connections';

/** What the connection flow's `error=` codes (docs/ad-connections.md) mean to the person who clicked "Connect". */
const FLOW_ERRORS: Record<string, string> = {
  access_denied: 'You declined access at the provider. Nothing was connected.',
  invalid_state: 'The connection attempt was not recognised (it may have been used already). Start again.',
  expired_state: 'The connection attempt took too long. Start again.',
  browser_mismatch: 'The connection was finished in a different browser than the one that started it. Start again in one browser.',
  missing_code: 'The provider did not send an authorization. Start again.',
  invalid_code: 'The provider refused the authorization. Start again.',
  scope_missing: 'Access to ad management was not granted. Start again and allow all requested permissions.',
  no_accounts: 'This login has no ad accounts to connect.',
  permission_denied: 'Your account may no longer connect ad accounts.',
  provider_unavailable: 'The provider could not be reached. Try again shortly.',
  provider_error: 'The provider answered with an error. Try again shortly.',
  invalid_grant: 'The provider no longer accepts this authorization. Start again.',
  temporarily_unavailable: 'The provider is temporarily unavailable. Try again shortly.',
  server_error: 'Something went wrong on our side. Try again shortly.',
};

/** Google's policy an admin accepts for Customer Match (SPEC 10.3); a link for the reader, never fetched by the app. */
const CUSTOMER_MATCH_POLICY = 'https://support.google.com/adspolicy/answer/6299717';

/**
 * What stands between a connection and its use, said for a marketer. A Google grant without the
 * Data Manager permission (`scope_missing`, SPEC 10.3) still delivers signals, so it is worded as a
 * missing permission for audiences rather than as a broken connection.
 */
function reasonText(row: Connection, canWrite: boolean): string {
  if (row.status_reason === 'scope_missing')
    return canWrite
      ? 'Audiences cannot sync to this account yet: Google did not give us permission to upload audience lists. Reconnect and allow every permission Google asks for.'
      : 'Audiences cannot sync to this account yet: Google did not give us permission to upload audience lists. An admin or editor can reconnect it.';
  return row.status_reason ? row.status_reason.replace(/_/g, ' ') : '';
}

/** Starts an OAuth flow (SPEC section 6): the service answers where to send the browser; it comes back here with the outcome. */
export async function startFlow(slug: string): Promise<void> {
  const started = await api<{ authorization_url: string }>('POST', `/oauth/connections/${slug}/start`, { return_to: APP });
  window.location.assign(started.authorization_url);
}

export function ConnectionsPage() {
  const { canWrite, config, user } = useSession();
  const isAdmin = user.role === 'admin';
  const location = useLocation();
  // A flow's outcome (SPEC section 6: platform, connected or error) is read once, then dropped
  // from the address, so a reload does not repeat it and `platform` does not filter the list.
  const [outcome] = useState(() => ({ ...location.query }));
  useEffect(() => {
    if (outcome.connected || outcome.error) location.route(APP, true);
  }, []);
  const query = outcome;
  const [problem, setProblem] = useState<Problem | null>(null);
  const [starting, setStarting] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const [editing, setEditing] = useState<Connection | null>(null);
  const [removing, setRemoving] = useState<Connection | null>(null);
  const [terms, setTerms] = useState<Connection | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const platform = query.platform ? platformLabel(query.platform) : 'the ad platform';

  const connect = (slug: string) => {
    setProblem(null);
    setStarting(slug);
    startFlow(slug).catch((error: unknown) => {
      setStarting(null);
      if (error instanceof ProblemError) setProblem(error.problem);
    });
  };

  return (
    <>
      <PageHeader title="Connections" description="Google Ads and Meta Ads accounts that audiences and signals deliver to.">
        {canWrite
          ? config.ad_platforms.map((slug) => (
              <button key={slug} type="button" class="button button-primary" disabled={starting !== null} onClick={() => connect(slug)}>
                {starting === slug ? 'Redirecting…' : `Connect ${slug === 'google-ads' ? 'Google Ads' : 'Meta Ads'}`}
              </button>
            ))
          : null}
      </PageHeader>
      {query.connected ? (
        <Notice kind="success">
          Connected {query.connected} {platform} account{query.connected === '1' ? '' : 's'}.
        </Notice>
      ) : null}
      {query.error ? <Notice kind="error">{FLOW_ERRORS[query.error] ?? `Connecting ${platform} failed (${query.error}).`}</Notice> : null}
      {/* Said for the marketer who reads it; how an operator turns platforms on is in docs/ad-connections.md, not here. */}
      {canWrite && config.ad_platforms.length === 0 ? (
        <Notice kind="info">
          Connecting Google Ads or Meta Ads accounts is not set up yet. Ask your administrator to set up ad platform connections, then come
          back here to connect your accounts.
        </Notice>
      ) : null}
      {done ? <Notice kind="success">{done}</Notice> : null}
      <ProblemNotice problem={problem} />
      <ResourceList<Connection>
        apiPath={API}
        appPath={APP}
        caption="Connections"
        version={version}
        search={{ param: 'search', label: 'Search by account name' }}
        filters={[
          { name: 'platform', label: 'Platform', options: CONNECTION_PLATFORMS.map((value) => ({ value, label: PLATFORMS[value].label })) },
          { name: 'status', label: 'Status', options: enumOptions(CONNECTION_STATUSES) },
        ]}
        orderings={[
          { value: 'name', label: 'Account name (A–Z)' },
          { value: '-name', label: 'Account name (Z–A)' },
          { value: 'created_at', label: 'Oldest first' },
          { value: 'status', label: 'Status' },
        ]}
        columns={[
          {
            label: 'Account',
            cell: (row) => (
              <>
                <strong>{row.account_name}</strong>
                <br />
                <small>
                  {platformLabel(row.platform)} · {row.external_account_id}
                </small>
              </>
            ),
          },
          {
            label: 'Status',
            cell: (row) => (
              <>
                <StatusBadge status={row.status} />
                {row.status_reason ? <small class="reason"> {reasonText(row, canWrite)}</small> : null}
                {row.platform === 'google_ads' ? (
                  <>
                    <br />
                    <small class="reason">
                      {row.customer_match_terms_accepted
                        ? 'Customer Match terms accepted.'
                        : isAdmin
                          ? 'Customer Match terms not accepted yet: audiences cannot sync to this account until you accept them.'
                          : 'Customer Match terms not accepted yet: audiences cannot sync to this account until an admin accepts them.'}
                    </small>
                  </>
                ) : null}
              </>
            ),
          },
          { label: 'Last refreshed', cell: (row) => formatDate(row.last_refreshed_at) },
          {
            label: 'Actions',
            cell: (row) =>
              canWrite ? (
                <div class="row-actions">
                  {row.reauthorize_required && config.ad_platforms.includes(PLATFORMS[row.platform].slug) ? (
                    <button type="button" class="button button-primary" onClick={() => connect(PLATFORMS[row.platform].slug)}>
                      Reconnect<span class="visually-hidden"> {row.account_name}</span>
                    </button>
                  ) : null}
                  <button type="button" class="button" onClick={() => setEditing(row)}>
                    Rename<span class="visually-hidden"> {row.account_name}</span>
                  </button>
                  {isAdmin && row.platform === 'google_ads' ? (
                    <button type="button" class="button" onClick={() => setTerms(row)}>
                      Customer Match terms<span class="visually-hidden"> of {row.account_name}</span>
                    </button>
                  ) : null}
                  <button type="button" class="button button-danger" onClick={() => setRemoving(row)}>
                    Delete<span class="visually-hidden"> {row.account_name}</span>
                  </button>
                </div>
              ) : (
                '—'
              ),
          },
        ]}
        empty={
          <EmptyState title="No connections yet">
            <p>Connect a Google Ads or Meta Ads account to deliver audiences and signals to it.</p>
          </EmptyState>
        }
      />
      <RenameDialog
        connection={editing}
        onClose={(saved) => {
          setEditing(null);
          if (saved) {
            setDone('Connection renamed.');
            setVersion((value) => value + 1);
          }
        }}
      />
      <TermsDialog
        connection={terms}
        onClose={(accepted) => {
          setTerms(null);
          if (accepted !== undefined) {
            setDone(accepted ? 'Customer Match terms accepted.' : 'Customer Match terms withdrawn.');
            setVersion((value) => value + 1);
          }
        }}
      />
      <DeleteDialog
        path={removing ? `${API}${removing.id}/` : null}
        title={`Delete “${removing?.account_name ?? ''}”?`}
        onClose={(deleted) => {
          setRemoving(null);
          if (deleted) {
            setDone('Connection deleted; its grant was revoked at the provider.');
            setVersion((value) => value + 1);
          }
        }}
      >
        <p>The grant is revoked at the provider. Signals that deliver to this account lose it, and active ones are paused.</p>
      </DeleteDialog>
    </>
  );
}

/** Stays mounted, so closing it gives the focus back to the button that opened it. */
function RenameDialog(props: { connection: Connection | null; onClose: (saved: boolean) => void }) {
  const form = useForm({ account_name: '' });
  useEffect(() => {
    form.setProblem(null);
    if (props.connection) form.setValues({ account_name: props.connection.account_name });
  }, [props.connection?.id]);
  const save = () =>
    form.submit(async () => {
      if (!props.connection) return;
      await api('PATCH', `${API}${props.connection.id}/`, { account_name: form.values.account_name });
      props.onClose(true);
    });
  return (
    <ConfirmDialog
      open={props.connection !== null}
      title="Rename connection"
      confirmLabel="Save"
      busy={form.busy}
      onConfirm={() => void save()}
      onCancel={() => props.onClose(false)}
    >
      <FormProblem form={form} />
      <TextField label="Account name" {...form.bind('account_name')} required maxLength={255} />
    </ConfirmDialog>
  );
}

/**
 * An admin declares Google's Customer Match terms accepted for one Google Ads account (SPEC 10.3).
 * The API refuses anyone else, so the button is only offered to admins.
 */
function TermsDialog(props: { connection: Connection | null; onClose: (accepted?: boolean) => void }) {
  const form = useForm({ accepted: false });
  const checkboxId = useId();
  const explanationId = useId();
  useEffect(() => {
    form.setProblem(null);
    if (props.connection) form.setValues({ accepted: props.connection.customer_match_terms_accepted });
  }, [props.connection?.id]);
  const save = () =>
    form.submit(async () => {
      if (!props.connection) return;
      await api('PATCH', `${API}${props.connection.id}/`, { customer_match_terms_accepted: form.values.accepted });
      props.onClose(form.values.accepted);
    });
  return (
    <ConfirmDialog
      open={props.connection !== null}
      title="Customer Match terms"
      confirmLabel="Save"
      busy={form.busy}
      onConfirm={() => void save()}
      onCancel={() => props.onClose()}
    >
      <FormProblem form={form} />
      <p id={explanationId}>
        Google only takes audience lists built from your customers’ data (Customer Match) from advertisers who accept its terms for that
        use. Audiences sync to “{props.connection?.account_name}” only once your organisation accepts them. Read{' '}
        <a href={CUSTOMER_MATCH_POLICY} target="_blank" rel="noopener noreferrer">
          Google’s Customer Match policy
        </a>{' '}
        before you accept.
      </p>
      <label class="checkbox" for={checkboxId}>
        <input
          id={checkboxId}
          type="checkbox"
          name="customer_match_terms_accepted"
          aria-describedby={explanationId}
          checked={form.values.accepted}
          onChange={(event) => form.setValues({ accepted: event.currentTarget.checked })}
        />
        My organisation accepts Google’s Customer Match terms for this account
      </label>
    </ConfirmDialog>
  );
}
