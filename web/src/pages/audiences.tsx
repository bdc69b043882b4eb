import { useRoute } from 'preact-iso';
import { api } from '../api/client';
import type { Audience } from '../api/types';
import { StatusBadge } from '../components/feedback';
import { CheckboxGroup, NumberField, SelectField, TextArea, TextField } from '../components/fields';
import { idOrNull, parseJsonObject, textOf, useForm } from '../components/form';
import { enumOptions, useChoices, withNone } from '../components/lookups';
import { ResourceForm } from '../components/form-problem';
import { ResourceEditor, type Transition } from '../components/resource-editor';
import { ResourceIndex } from '../components/resource-index';

const API = '/api/v1/audiences/';
const APP = '/app/audiences';
const STATUSES = ['draft', 'active', 'archived'] as const;
const SOURCE_TYPES = ['rules', 'model', 'upload'] as const;

export function AudiencesPage() {
  return (
    <ResourceIndex<Audience>
      title="Audiences"
      description="Groups of people to target: by rules, by a model’s scores, or uploaded."
      noun="audience"
      apiPath={API}
      appPath={APP}
      filters={[
        { name: 'status', label: 'Status', options: enumOptions(STATUSES) },
        { name: 'source_type', label: 'Source', options: enumOptions(SOURCE_TYPES) },
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

function transitions(row: Audience): Transition[] {
  const archive = { to: 'archived', label: 'Archive', confirm: 'An archived audience is final: it can never change again.' };
  if (row.status === 'draft') return [{ to: 'active', label: 'Activate' }, archive];
  if (row.status === 'active') return [archive];
  return [];
}

export function AudiencePage() {
  const { params } = useRoute();
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
      transitions={transitions}
      readOnly={(row) => row.status === 'archived'}
      form={(args) => <AudienceForm {...args} />}
    />
  );
}

function AudienceForm(props: { row: Audience | null; readOnly: boolean; onSaved: (row: Audience) => void }) {
  const { row } = props;
  const models = useChoices('/api/v1/ai-model-instances/');
  const connections = useChoices('/api/v1/connections/');
  const form = useForm({
    name: row?.name ?? '',
    description: row?.description ?? '',
    source_type: row?.source_type ?? 'rules',
    model_instance: textOf(row?.model_instance),
    min_score: textOf(row?.min_score),
    connections: (row?.connections ?? []).map(String),
    rules: JSON.stringify(row?.rules ?? {}, null, 2),
  });
  const { values, set } = form;
  const byModel = values.source_type === 'model';

  const save = () =>
    form.submit(async () => {
      const body = {
        name: values.name,
        description: values.description,
        source_type: values.source_type,
        model_instance: byModel ? idOrNull(values.model_instance) : null,
        min_score: byModel && values.min_score !== '' ? Number(values.min_score) : null,
        connections: values.connections.map(Number),
        rules: parseJsonObject(values.rules, 'rules'),
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
      <SelectField label="Source" {...form.bind('source_type')} required options={enumOptions(SOURCE_TYPES)} />
      {byModel ? (
        <div class="field-row">
          <SelectField label="Model" {...form.bind('model_instance')} required options={withNone(models)} />
          <NumberField
            label="Minimum score"
            {...form.bind('min_score')}
            hint="Between 0 and 1; empty for none."
            min={0}
            max={1}
            step="any"
          />
        </div>
      ) : null}
      <CheckboxGroup
        label="Destinations"
        name="connections"
        values={values.connections}
        onValues={set('connections')}
        options={connections}
        empty="No connections yet: connect an ad account on the Connections page."
        errors={form.errorsFor('connections')}
      />
      <TextArea label="Rules (JSON)" {...form.bind('rules')} code rows={6} hint="A JSON object, at most 64 KiB." />
    </ResourceForm>
  );
}
