import { useEffect, useState } from 'preact/hooks';
import { api, type Problem, ProblemError } from '../api/client';
import type { CreatedWebhook, Page, Webhook, WebhookDelivery, WebhookSecret } from '../api/types';
import { DeleteDialog } from '../components/delete-dialog';
import { EmptyState, formatDate, Loading, Notice, PageHeader, ProblemNotice, StatusBadge } from '../components/feedback';
import { FieldNotes, TextField } from '../components/fields';
import { FormProblem } from '../components/form-problem';
import { useForm } from '../components/form';
import { useSession } from '../session';

const API = '/api/v1/webhooks/';

/** The events an endpoint may hear of (SPEC 10.5), in words. */
export const EVENT_WORDS: Record<string, string> = {
  'sync.succeeded': 'An audience sync succeeded',
  'sync.failed': 'An audience sync failed',
  'connection.reauthorization_required': 'A connection must be connected again',
  'signal.failed': 'A signal failed',
  'import.finished': 'An import finished',
  'webhook.test': 'Test event',
};
const EVENTS = Object.keys(EVENT_WORDS).filter((name) => name !== 'webhook.test');

const DISABLED_WORDS: Record<string, string> = {
  disabled_by_user: 'Turned off by an admin',
  failing_for_24_hours: 'Turned off: every delivery failed for 24 hours',
};

/** While a delivery is pending the page looks again this often, so a test event's outcome shows by itself. */
const REFRESH_MS = 1000;

/**
 * Settings › Webhooks (SPEC 10.5): endpoints that hear of background events, their recent
 * deliveries, and for admins everything that changes them. Secrets are shown once, when made.
 */
export function WebhooksPage() {
  const { user } = useSession();
  const admin = user.role === 'admin';
  const [webhooks, setWebhooks] = useState<Webhook[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [secret, setSecret] = useState<{ title: string; secret: string; note: string } | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [deliveriesVersion, setDeliveriesVersion] = useState(0);

  const load = () =>
    api<Page<Webhook>>('GET', `${API}?page_size=100`).then(
      (page) => {
        setWebhooks(page.results);
        setSelected((current) => current ?? page.results[0]?.id ?? null);
      },
      (error: unknown) => error instanceof ProblemError && setProblem(error.problem),
    );
  useEffect(() => void load(), []);

  /** Runs one action on an endpoint; its refusal shows above the list. */
  const act = async (action: () => Promise<void>) => {
    setProblem(null);
    setNotice(null);
    try {
      await action();
    } catch (error) {
      if (error instanceof ProblemError) setProblem(error.problem);
      else throw error;
    }
  };
  const sendTest = (webhook: Webhook) =>
    act(async () => {
      await api<WebhookDelivery>('POST', `${API}${webhook.id}/test/`);
      setSelected(webhook.id);
      setDeliveriesVersion((version) => version + 1);
      setNotice(`Test event queued for ${webhook.url}; its outcome appears under Recent deliveries.`);
    });
  const rotate = (webhook: Webhook) =>
    act(async () => {
      const rotated = await api<WebhookSecret>('POST', `${API}${webhook.id}/rotate-secret/`);
      setSecret({
        title: `New secret for ${webhook.url}`,
        secret: rotated.secret,
        note: `The previous secret keeps signing beside it until ${formatDate(rotated.rotation_overlap_ends_at)}.`,
      });
      await load();
    });
  const toggle = (webhook: Webhook) =>
    act(async () => {
      await api<Webhook>('PATCH', `${API}${webhook.id}/`, { enabled: !webhook.enabled });
      setNotice(webhook.enabled ? `Deliveries to ${webhook.url} are stopped.` : `Deliveries to ${webhook.url} are on again.`);
      await load();
    });

  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Your endpoints that hear of what happens in the background: syncs, connections that need reconnecting, failed signals, finished imports. Every delivery is signed (Standard Webhooks)."
      />
      {admin ? (
        <CreateWebhookForm
          onCreated={(created) => {
            setSecret({
              title: `Webhook for ${created.url} created`,
              secret: created.secret,
              note: 'Use it to verify the webhook-signature header.',
            });
            setSelected(created.id);
            void load();
          }}
        />
      ) : (
        <Notice kind="info">Only admins add or change webhooks; you can see them and their deliveries.</Notice>
      )}
      {secret ? <SecretPanel {...secret} onDismiss={() => setSecret(null)} /> : null}
      {notice ? <Notice kind="success">{notice}</Notice> : null}
      <ProblemNotice problem={problem} />
      <section aria-labelledby="webhooks-heading">
        <h2 id="webhooks-heading">Endpoints</h2>
        {webhooks === null && !problem ? <Loading /> : null}
        {webhooks?.length === 0 ? (
          <EmptyState title="No webhooks yet">
            <p>{admin ? 'Add an endpoint above to be told when something happens.' : 'An admin can add one.'}</p>
          </EmptyState>
        ) : null}
        {webhooks && webhooks.length > 0 ? (
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Webhook endpoints</caption>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">Status</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {webhooks.map((webhook) => (
                  <tr key={webhook.id} aria-current={webhook.id === selected ? 'true' : undefined}>
                    <td>
                      <code>{webhook.url}</code>
                      {webhook.description ? <div class="hint">{webhook.description}</div> : null}
                    </td>
                    <td>
                      <ul class="plain-list">
                        {webhook.events.map((event) => (
                          <li key={event}>{EVENT_WORDS[event] ?? event}</li>
                        ))}
                      </ul>
                    </td>
                    <td>
                      {webhook.enabled ? (
                        <StatusBadge status="active" label="Enabled" />
                      ) : (
                        <>
                          <StatusBadge status="paused" label="Disabled" />
                          <div class="hint">{DISABLED_WORDS[webhook.disabled_reason ?? ''] ?? 'Turned off'}</div>
                        </>
                      )}
                      {webhook.enabled && webhook.failing_since ? (
                        <div class="hint">Failing since {formatDate(webhook.failing_since)}</div>
                      ) : null}
                    </td>
                    <td>
                      <div class="row-actions">
                        <button type="button" class="button" onClick={() => setSelected(webhook.id)}>
                          Show deliveries<span class="visually-hidden"> of {webhook.url}</span>
                        </button>
                        {admin ? (
                          <>
                            <button type="button" class="button" onClick={() => void sendTest(webhook)}>
                              Send test event<span class="visually-hidden"> to {webhook.url}</span>
                            </button>
                            <button type="button" class="button" onClick={() => void toggle(webhook)}>
                              {webhook.enabled ? 'Disable' : 'Enable'}
                              <span class="visually-hidden"> {webhook.url}</span>
                            </button>
                            <button type="button" class="button" onClick={() => void rotate(webhook)}>
                              Rotate secret<span class="visually-hidden"> of {webhook.url}</span>
                            </button>
                            <button type="button" class="button button-danger" onClick={() => setDeleting(webhook)}>
                              Delete<span class="visually-hidden"> {webhook.url}</span>
                            </button>
                          </>
                        ) : null}
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
      {selected !== null && webhooks?.some((webhook) => webhook.id === selected) ? (
        <Deliveries webhook={webhooks.find((webhook) => webhook.id === selected)!} version={deliveriesVersion} />
      ) : null}
      <DeleteDialog
        path={deleting ? `${API}${deleting.id}/` : null}
        title={`Delete the webhook for ${deleting?.url ?? ''}?`}
        onClose={(done) => {
          if (done && deleting) {
            setNotice(`Webhook for ${deleting.url} deleted: nothing more is sent to it.`);
            if (selected === deleting.id) setSelected(null);
            void load();
          }
          setDeleting(null);
        }}
      >
        <p>Nothing more is sent to this endpoint, and its delivery history goes with it.</p>
      </DeleteDialog>
    </>
  );
}

function CreateWebhookForm(props: { onCreated: (webhook: CreatedWebhook) => void }) {
  const form = useForm({ url: '', description: '', events: [] as string[] });
  const create = () =>
    form.submit(async () => {
      const body = { url: form.values.url, description: form.values.description, events: form.values.events };
      props.onCreated(await api<CreatedWebhook>('POST', API, body));
      form.setValues({ url: '', description: '', events: [] });
    });
  const eventErrors = form.errorsFor('events');
  return (
    <form
      class="form"
      noValidate
      aria-label="New webhook"
      onSubmit={(event) => {
        event.preventDefault();
        void create();
      }}
    >
      <FormProblem form={form} />
      <div class="field-row">
        <TextField
          label="Endpoint URL"
          {...form.bind('url')}
          required
          maxLength={2048}
          hint="https in production; it must reach a public address."
        />
        <TextField label="Description" {...form.bind('description')} maxLength={2000} hint="Who receives it, for your own records." />
      </div>
      <fieldset class={`field${eventErrors ? ' field-invalid' : ''}`} aria-describedby={eventErrors ? 'webhook-events-notes' : undefined}>
        <legend>Events</legend>
        {EVENTS.map((name) => (
          <label key={name} class="checkbox">
            <input
              type="checkbox"
              checked={form.values.events.includes(name)}
              onChange={(event) =>
                form.set('events')(
                  event.currentTarget.checked ? [...form.values.events, name] : form.values.events.filter((existing) => existing !== name),
                )
              }
            />
            {EVENT_WORDS[name]} <code>{name}</code>
          </label>
        ))}
        <FieldNotes id="webhook-events-notes" errors={eventErrors} />
      </fieldset>
      <div class="actions">
        <button type="submit" class="button button-primary" disabled={form.busy}>
          {form.busy ? 'Adding…' : 'Add webhook'}
        </button>
      </div>
    </form>
  );
}

/** A signing secret, once: after it is dismissed the service never shows it again. */
function SecretPanel(props: { title: string; secret: string; note: string; onDismiss: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret);
      setCopied('Secret copied to the clipboard.');
    } catch {
      setCopied('Copying is not allowed here: select the text and copy it yourself.');
    }
  };
  return (
    <section class="panel panel-highlight" aria-labelledby="webhook-secret-heading">
      <h2 id="webhook-secret-heading">{props.title}</h2>
      <p>
        <strong>Copy the signing secret now: it is shown only this once.</strong> {props.note}
      </p>
      <label for="webhook-secret-value">Signing secret</label>
      <div class="copy-row">
        <input id="webhook-secret-value" readOnly value={props.secret} class="code" />
        <button type="button" class="button" onClick={() => void copy()}>
          Copy secret
        </button>
      </div>
      <div class="actions">
        <button type="button" class="button button-primary" onClick={props.onDismiss}>
          Done
        </button>
      </div>
      {copied ? (
        <p role="status" class="hint">
          {copied}
        </p>
      ) : null}
    </section>
  );
}

function deliveryOutcome(delivery: WebhookDelivery): string {
  if (delivery.status === 'succeeded') return `Received (${delivery.response_status ?? '2xx'})`;
  if (delivery.attempt === 0) return 'Waiting for the first attempt';
  return delivery.error ?? 'Failed';
}

/** The endpoint's recent deliveries, newest first; looked at again every second while one is pending. */
function Deliveries(props: { webhook: Webhook; version: number }) {
  const [deliveries, setDeliveries] = useState<WebhookDelivery[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    api<Page<WebhookDelivery>>('GET', `${API}${props.webhook.id}/deliveries/?page_size=20`).then(
      (page) => {
        if (!current) return;
        setDeliveries(page.results);
        setProblem(null);
        if (page.results.some((delivery) => delivery.status === 'pending')) timer = setTimeout(() => setTick((n) => n + 1), REFRESH_MS);
      },
      (error: unknown) => current && error instanceof ProblemError && setProblem(error.problem),
    );
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [props.webhook.id, props.version, tick]);

  return (
    <section aria-labelledby="deliveries-heading">
      <h2 id="deliveries-heading">Recent deliveries to {props.webhook.url}</h2>
      <ProblemNotice problem={problem} />
      {deliveries === null && !problem ? <Loading /> : null}
      {deliveries?.length === 0 ? (
        <EmptyState title="Nothing delivered yet">
          <p>Deliveries appear here when an event this endpoint listens to happens, or when you send a test event.</p>
        </EmptyState>
      ) : null}
      {deliveries && deliveries.length > 0 ? (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Recent deliveries to {props.webhook.url}</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Created</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Response</th>
                <th scope="col">Duration</th>
                <th scope="col">Next attempt</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((delivery) => (
                <tr key={delivery.id}>
                  <td>
                    {EVENT_WORDS[delivery.event_type] ?? delivery.event_type}
                    <div class="hint">
                      <code>{delivery.event_id}</code>
                    </div>
                  </td>
                  <td>{formatDate(delivery.created_at)}</td>
                  <td>
                    <StatusBadge status={delivery.status} />
                  </td>
                  <td>{delivery.attempt}</td>
                  <td>{deliveryOutcome(delivery)}</td>
                  <td>{delivery.duration_ms === null ? '—' : `${delivery.duration_ms} ms`}</td>
                  <td>{delivery.status === 'pending' ? formatDate(delivery.next_attempt_at) : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
