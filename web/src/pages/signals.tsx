import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, type Problem, ProblemError } from '../api/client';
import { SIGNAL_STATUSES, SIGNAL_TYPES } from '../api/enums';
import { SIGNAL_STATUS_NAMES, SIGNAL_TRANSITIONS } from '../api/status-transitions';
import type { Page, Signal, SignalEvent } from '../api/types';
import { formatDate, Loading, Notice, ProblemNotice, StatusBadge } from '../components/feedback';
import { FieldRow, SelectField, TextArea, TextField } from '../components/fields';
import { ResourceForm } from '../components/form-problem';
import { idOrNull, parseJsonObject, textOf, useForm } from '../components/form';
import { enumOptions } from '../components/lookups';
import { ReferenceField } from '../components/reference-picker';
import { AUDIENCES, CONNECTIONS, MODELS } from '../components/references';
import { ResourceEditor } from '../components/resource-editor';
import { ResourceIndex } from '../components/resource-index';

const API = '/api/v1/signals/';
const APP = '/app/signals';
const statusName = (code: Signal['status']) => SIGNAL_STATUS_NAMES[code] ?? String(code);

export function SignalsPage() {
  return (
    <ResourceIndex<Signal>
      title="Signals"
      description="Streams of conversions, values or model scores sent to an ad platform to steer bidding."
      noun="signal"
      apiPath={API}
      appPath={APP}
      filters={[
        {
          name: 'status',
          label: 'Status',
          options: SIGNAL_STATUSES.map((code) => ({ value: String(code), label: enumOptions([SIGNAL_STATUS_NAMES[code]])[0].label })),
        },
        { name: 'signal_type', label: 'Type', options: enumOptions(SIGNAL_TYPES) },
        { name: 'audience', label: 'Audience', reference: AUDIENCES },
        { name: 'model_instance', label: 'Model', reference: MODELS },
        { name: 'connection', label: 'Connection', reference: CONNECTIONS },
      ]}
      columns={[
        { label: 'Type', cell: (row) => row.signal_type },
        { label: 'Status', cell: (row) => <StatusBadge status={statusName(row.status)} /> },
      ]}
      emptyText="A signal feeds conversions or model scores to a connected ad account."
    />
  );
}

export function SignalPage() {
  const { params } = useRoute();
  return (
    <ResourceEditor<Signal>
      // A new object page per id: creating moves from /new to /<id> with fresh state.
      key={params.id}
      id={params.id}
      apiPath={API}
      appPath={APP}
      noun="signal"
      titleOf={(row) => row.name}
      status={(row) => ({ value: statusName(row.status), label: statusName(row.status) })}
      transitions={(row) => SIGNAL_TRANSITIONS[row.status]}
      readOnly={(row) => row.status === 4}
      form={(args) => <SignalForm {...args} />}
    >
      {(row) => <SignalDelivery row={row} />}
    </ResourceEditor>
  );
}

/** How often the delivery panel reads the counts and recent events again while the page is open. */
const REFRESH_MS = 2000;

/** A delivery error's reason code (before the colon) in words an advertiser can act on (SPEC 10.4). */
const ERROR_WORDS: Record<string, string> = {
  rate_limited: 'The ad platform asked us to slow down. Delivery is retried automatically.',
  server_error: 'The ad platform had a temporary problem. Delivery is retried automatically.',
  unreachable: 'The ad platform could not be reached. Delivery is retried automatically.',
  destination_refused:
    'The ad platform refused the destination: the conversion action or pixel does not exist, or the connected account may not use it. Fix the configuration, then activate the signal again.',
  reauthorize_required: 'The connection to the ad account no longer works. Reconnect the account, then activate the signal again.',
  config_incomplete: 'The configuration is not complete for the connection’s platform.',
  invalid_request: 'The ad platform refused an event as invalid; the others sent with it were delivered.',
  event_time_too_old: 'The event was older than the ad platform takes when it was to be sent.',
  event_time_in_future: 'The event’s time was in the future.',
  invalid_hash: 'An identifier was not a proper hash.',
  no_match_key: 'The event had nothing the ad platform could match it by.',
  website_event_incomplete: 'A website event needs the browser’s user agent and the page’s address.',
  too_large: 'A request was too large for the ad platform.',
  held_too_long: 'Events were held for longer than 7 days while the signal was not active, and expired.',
};

/** `reason: platform words` → the reason in words, and the platform's own message. */
export function errorInWords(error: string): { words: string; detail: string } {
  const colon = error.indexOf(':');
  const code = colon === -1 ? error : error.slice(0, colon);
  const detail = colon === -1 ? '' : error.slice(colon + 1).trim();
  return { words: ERROR_WORDS[code] ?? 'Delivery went wrong.', detail };
}

/** An event's error: the reason in words, and the platform's own message in small print. */
function EventError(props: { error: string }) {
  const { words, detail } = errorInWords(props.error);
  return (
    <>
      {words}
      {detail ? <small class="reason"> {detail}</small> : null}
    </>
  );
}

/** Delivery of the signal's events (SPEC 10.4): counts, the last error in words, and the most recent events. */
function SignalDelivery(props: { row: Signal }) {
  const [signal, setSignal] = useState(props.row);
  const [events, setEvents] = useState<Page<SignalEvent> | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);

  useEffect(() => setSignal(props.row), [props.row]);

  useEffect(() => {
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async () => {
      try {
        const [latest, page] = await Promise.all([
          api<Signal>('GET', `${API}${props.row.id}/`),
          api<Page<SignalEvent>>('GET', `${API}${props.row.id}/events/?page_size=10`),
        ]);
        if (!current) return;
        setSignal(latest);
        setEvents(page);
        setProblem(null);
      } catch (error) {
        if (!current) return;
        if (error instanceof ProblemError) setProblem(error.problem);
      }
      if (current) timer = setTimeout(() => void read(), REFRESH_MS);
    };
    void read();
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [props.row.id, props.row.updated_at]);

  const { delivery } = signal;
  const testCode = typeof signal.config.test_event_code === 'string' ? signal.config.test_event_code : null;
  const lastError = delivery.last_error ? errorInWords(delivery.last_error) : null;
  const reason = signal.status === 3 && signal.status_reason ? errorInWords(signal.status_reason) : null;
  return (
    <section class="panel" aria-labelledby="delivery-heading">
      <h2 id="delivery-heading">
        Delivery{' '}
        {testCode ? (
          <span class="badge badge-test" title={`Events go to Meta’s Test Events with the code ${testCode}, not to your ads.`}>
            Test mode
          </span>
        ) : null}
      </h2>
      {testCode ? (
        <p class="reason">Test mode: events go to Meta’s Test Events tool (code {testCode}) and do not count for your ads.</p>
      ) : null}
      {reason ? (
        <Notice kind="error">
          <strong>This signal failed.</strong> {reason.words}
          {reason.detail ? <small class="reason"> The platform said: {reason.detail}</small> : null}
        </Notice>
      ) : null}
      <dl class="facts delivery-counts">
        <dt>Received</dt>
        <dd>{delivery.received.toLocaleString()}</dd>
        <dt>Delivered</dt>
        <dd>{delivery.delivered.toLocaleString()}</dd>
        <dt>Pending</dt>
        <dd>{delivery.pending.toLocaleString()}</dd>
        <dt>Failed</dt>
        <dd>{delivery.failed.toLocaleString()}</dd>
        <dt>Last delivered</dt>
        <dd>{formatDate(delivery.last_delivered_at)}</dd>
      </dl>
      {lastError ? (
        <p class="delivery-error">
          <strong>Last error:</strong> {lastError.words}
          {lastError.detail ? <small class="reason"> The platform said: {lastError.detail}</small> : null}
        </p>
      ) : null}
      <ProblemNotice problem={problem} />
      <h3>Recent events</h3>
      {!events && !problem ? <Loading /> : null}
      {events && events.count === 0 ? <p class="reason">No events yet. Send them with POST /api/v1/signals/{signal.id}/events/.</p> : null}
      {events && events.count > 0 ? (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Recent events</caption>
            <thead>
              <tr>
                <th scope="col">Event id</th>
                <th scope="col">Happened</th>
                <th scope="col">Value</th>
                <th scope="col">Status</th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody>
              {events.results.map((event) => (
                <tr key={event.id}>
                  <td>{event.event_id}</td>
                  <td>{formatDate(event.event_time)}</td>
                  <td>{event.value === null ? '—' : `${event.value.toLocaleString()} ${event.currency ?? ''}`.trim()}</td>
                  <td>
                    <StatusBadge status={event.status} />
                  </td>
                  <td>{event.error ? <EventError error={event.error} /> : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

function SignalForm(props: { row: Signal | null; readOnly: boolean; onSaved: (row: Signal) => void }) {
  const { row } = props;
  const form = useForm({
    name: row?.name ?? '',
    description: row?.description ?? '',
    signal_type: row?.signal_type ?? 'conversion',
    model_instance: textOf(row?.model_instance),
    audience: textOf(row?.audience),
    connection: textOf(row?.connection),
    config: JSON.stringify(row?.config ?? {}, null, 2),
  });
  const { values } = form;

  const save = () =>
    form.submit(async () => {
      const body = {
        name: values.name,
        description: values.description,
        signal_type: values.signal_type,
        model_instance: idOrNull(values.model_instance),
        audience: idOrNull(values.audience),
        connection: idOrNull(values.connection),
        config: parseJsonObject(values.config, 'config'),
      };
      props.onSaved(row ? await api<Signal>('PATCH', `${API}${row.id}/`, body) : await api<Signal>('POST', API, body));
    });

  return (
    <ResourceForm
      label={row ? 'Edit signal' : 'New signal'}
      form={form}
      readOnly={props.readOnly}
      submitLabel={row ? 'Save changes' : 'Create signal'}
      cancelHref={APP}
      onSubmit={() => void save()}
    >
      <TextField label="Name" {...form.bind('name')} required maxLength={255} />
      <TextArea label="Description" {...form.bind('description')} maxLength={2000} />
      <SelectField label="Type" {...form.bind('signal_type')} required options={enumOptions(SIGNAL_TYPES)} />
      <FieldRow>
        <ReferenceField label="Model" {...form.bind('model_instance')} source={MODELS} />
        <ReferenceField label="Audience" {...form.bind('audience')} source={AUDIENCES} />
        <ReferenceField
          label="Connection"
          {...form.bind('connection')}
          source={CONNECTIONS}
          hint="Activating needs an active connection."
        />
      </FieldRow>
      <TextArea label="Configuration (JSON)" {...form.bind('config')} code rows={6} hint="A JSON object, at most 64 KiB." />
    </ResourceForm>
  );
}
