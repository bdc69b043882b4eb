import { useRoute } from 'preact-iso';
import { api } from '../api/client';
import type { Signal } from '../api/types';
import { EmptyState, Notice, PageHeader, StatusBadge, formatDate } from '../components/feedback';
import { SelectField, TextArea, TextField } from '../components/fields';
import { FormProblem } from '../components/form-problem';
import { idOrNull, parseJsonObject, useForm } from '../components/form';
import { enumOptions, useChoices, withNone } from '../components/lookups';
import { ResourceEditor, type Transition } from '../components/resource-editor';
import { orderingsOf, ResourceList } from '../components/resource-list';
import { useSession } from '../session';

const API = '/api/v1/signals/';
const APP = '/app/signals';
const SIGNAL_TYPES = ['conversion', 'value', 'score'] as const;
/** The API's integer status codes (SPEC section 3), in words. */
export const SIGNAL_STATUSES = ['draft', 'active', 'paused', 'failed', 'archived'] as const;
const statusName = (code: number) => SIGNAL_STATUSES[code] ?? String(code);

export function SignalsPage() {
  const { canWrite } = useSession();
  const { query } = useRoute();
  return (
    <>
      <PageHeader title="Signals" description="Streams of conversions, values or model scores sent to an ad platform to steer bidding.">
        {canWrite ? (
          <a class="button button-primary" href={`${APP}/new`}>
            New signal
          </a>
        ) : null}
      </PageHeader>
      {query.deleted ? <Notice kind="success">The signal was deleted.</Notice> : null}
      <ResourceList<Signal>
        apiPath={API}
        appPath={APP}
        caption="Signals"
        filters={[
          {
            name: 'status',
            label: 'Status',
            options: SIGNAL_STATUSES.map((name, code) => ({ value: String(code), label: enumOptions([name])[0].label })),
          },
          { name: 'signal_type', label: 'Type', options: enumOptions(SIGNAL_TYPES) },
        ]}
        orderings={orderingsOf([
          { value: 'name', label: 'Name' },
          { value: 'created_at', label: 'Created' },
          { value: 'updated_at', label: 'Updated' },
          { value: 'status', label: 'Status' },
        ])}
        columns={[
          { label: 'Name', cell: (row) => <a href={`${APP}/${row.id}`}>{row.name}</a> },
          { label: 'Type', cell: (row) => row.signal_type },
          { label: 'Status', cell: (row) => <StatusBadge status={statusName(row.status)} /> },
          { label: 'Updated', cell: (row) => formatDate(row.updated_at) },
        ]}
        empty={
          <EmptyState title="No signals yet">
            <p>A signal feeds conversions or model scores to a connected ad account.</p>
            {canWrite ? (
              <a class="button button-primary" href={`${APP}/new`}>
                Create your first signal
              </a>
            ) : null}
          </EmptyState>
        }
      />
    </>
  );
}

/** SPEC section 3: 0→1, 1→2, 2→1, 3→1, any non-archived → 4. */
function transitions(row: Signal): Transition[] {
  const archive = { to: 4, label: 'Archive', confirm: 'An archived signal is final: it can never change again.' };
  switch (row.status) {
    case 0:
      return [{ to: 1, label: 'Activate' }, archive];
    case 1:
      return [{ to: 2, label: 'Pause' }, archive];
    case 2:
      return [{ to: 1, label: 'Resume' }, archive];
    case 3:
      return [{ to: 1, label: 'Reactivate' }, archive];
    default:
      return [];
  }
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
      transitions={transitions}
      readOnly={(row) => row.status === 4}
      form={(args) => <SignalForm {...args} />}
    />
  );
}

function SignalForm(props: { row: Signal | null; readOnly: boolean; onSaved: (row: Signal) => void }) {
  const { row } = props;
  const models = useChoices('/api/v1/ai-model-instances/');
  const audiences = useChoices('/api/v1/audiences/');
  const connections = useChoices('/api/v1/connections/');
  const text = (id: number | null | undefined) => (id === null || id === undefined ? '' : String(id));
  const form = useForm({
    name: row?.name ?? '',
    description: row?.description ?? '',
    signal_type: row?.signal_type ?? 'conversion',
    model_instance: text(row?.model_instance),
    audience: text(row?.audience),
    connection: text(row?.connection),
    config: JSON.stringify(row?.config ?? {}, null, 2),
  });
  const { values, set } = form;
  const fields = ['name', 'description', 'signal_type', 'model_instance', 'audience', 'connection', 'config'];

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
    <form
      class="form"
      noValidate
      aria-label={row ? 'Edit signal' : 'New signal'}
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      <FormProblem problem={form.problem} fields={fields} />
      <TextField
        label="Name"
        name="name"
        required
        maxLength={255}
        value={values.name}
        onValue={set('name')}
        errors={form.errorsFor('name')}
        disabled={props.readOnly}
      />
      <TextArea
        label="Description"
        name="description"
        maxLength={2000}
        value={values.description}
        onValue={set('description')}
        errors={form.errorsFor('description')}
        disabled={props.readOnly}
      />
      <SelectField
        label="Type"
        name="signal_type"
        required
        value={values.signal_type}
        onValue={(value) => set('signal_type')(value as Signal['signal_type'])}
        options={enumOptions(SIGNAL_TYPES)}
        errors={form.errorsFor('signal_type')}
        disabled={props.readOnly}
      />
      <div class="field-row">
        <SelectField
          label="Model"
          name="model_instance"
          value={values.model_instance}
          onValue={set('model_instance')}
          options={withNone(models)}
          errors={form.errorsFor('model_instance')}
          disabled={props.readOnly}
        />
        <SelectField
          label="Audience"
          name="audience"
          value={values.audience}
          onValue={set('audience')}
          options={withNone(audiences)}
          errors={form.errorsFor('audience')}
          disabled={props.readOnly}
        />
        <SelectField
          label="Connection"
          name="connection"
          hint="Activating needs an active connection."
          value={values.connection}
          onValue={set('connection')}
          options={withNone(connections)}
          errors={form.errorsFor('connection')}
          disabled={props.readOnly}
        />
      </div>
      <TextArea
        label="Configuration (JSON)"
        name="config"
        code
        rows={6}
        hint="A JSON object, at most 64 KiB."
        value={values.config}
        onValue={set('config')}
        errors={form.errorsFor('config')}
        disabled={props.readOnly}
      />
      {props.readOnly ? null : (
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={form.busy}>
            {form.busy ? 'Saving…' : row ? 'Save changes' : 'Create signal'}
          </button>
          <a class="button" href={APP}>
            Cancel
          </a>
        </div>
      )}
    </form>
  );
}
