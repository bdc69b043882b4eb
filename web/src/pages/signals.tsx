import { useRoute } from 'preact-iso';
import { api } from '../api/client';
import type { Signal } from '../api/types';
import { StatusBadge } from '../components/feedback';
import { SelectField, TextArea, TextField } from '../components/fields';
import { ResourceForm } from '../components/form-problem';
import { idOrNull, parseJsonObject, textOf, useForm } from '../components/form';
import { enumOptions, useChoices, withNone } from '../components/lookups';
import { ResourceEditor, type Transition } from '../components/resource-editor';
import { ResourceIndex } from '../components/resource-index';

const API = '/api/v1/signals/';
const APP = '/app/signals';
const SIGNAL_TYPES = ['conversion', 'value', 'score'] as const;
/** The API's integer status codes (SPEC section 3), in words. */
export const SIGNAL_STATUSES = ['draft', 'active', 'paused', 'failed', 'archived'] as const;
const statusName = (code: number) => SIGNAL_STATUSES[code] ?? String(code);

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
          options: SIGNAL_STATUSES.map((name, code) => ({ value: String(code), label: enumOptions([name])[0].label })),
        },
        { name: 'signal_type', label: 'Type', options: enumOptions(SIGNAL_TYPES) },
      ]}
      columns={[
        { label: 'Type', cell: (row) => row.signal_type },
        { label: 'Status', cell: (row) => <StatusBadge status={statusName(row.status)} /> },
      ]}
      emptyText="A signal feeds conversions or model scores to a connected ad account."
    />
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
      <div class="field-row">
        <SelectField label="Model" {...form.bind('model_instance')} options={withNone(models)} />
        <SelectField label="Audience" {...form.bind('audience')} options={withNone(audiences)} />
        <SelectField
          label="Connection"
          {...form.bind('connection')}
          hint="Activating needs an active connection."
          options={withNone(connections)}
        />
      </div>
      <TextArea label="Configuration (JSON)" {...form.bind('config')} code rows={6} hint="A JSON object, at most 64 KiB." />
    </ResourceForm>
  );
}
