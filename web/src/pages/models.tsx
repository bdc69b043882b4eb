import { useRoute } from 'preact-iso';
import { api } from '../api/client';
import { MODEL_STATUSES, MODEL_TYPES } from '../api/enums';
import { MODEL_TRANSITIONS } from '../api/status-transitions';
import type { ModelInstance } from '../api/types';
import { StatusBadge } from '../components/feedback';
import { FieldRow, SelectField, TextArea, TextField } from '../components/fields';
import { ResourceForm } from '../components/form-problem';
import { parseJsonObject, useForm } from '../components/form';
import { enumOptions } from '../components/lookups';
import { AUDIENCES, SIGNALS } from '../components/references';
import { ResourceEditor } from '../components/resource-editor';
import { ResourceIndex } from '../components/resource-index';

const API = '/api/v1/ai-model-instances/';
const APP = '/app/models';

export function ModelsPage() {
  return (
    <ResourceIndex<ModelInstance>
      title="AI models"
      description="Predictive models of your workspace: propensity, lifetime value, churn and lookalike."
      noun="model"
      apiPath={API}
      appPath={APP}
      filters={[
        { name: 'status', label: 'Status', options: enumOptions(MODEL_STATUSES) },
        { name: 'model_type', label: 'Type', options: enumOptions(MODEL_TYPES) },
      ]}
      columns={[
        { label: 'Type', cell: (row) => row.model_type.replace(/_/g, ' ') },
        { label: 'Base model', cell: (row) => <code>{row.base_model}</code> },
        { label: 'Status', cell: (row) => <StatusBadge status={row.status} /> },
        { label: 'Version', numeric: true, cell: (row) => row.version },
      ]}
      emptyText="A model instance scores people for audiences and signals."
    />
  );
}

export function ModelPage() {
  const { params } = useRoute();
  return (
    <ResourceEditor<ModelInstance>
      // A new object page per id: creating moves from /new to /<id> with fresh state.
      key={params.id}
      id={params.id}
      apiPath={API}
      appPath={APP}
      noun="model"
      titleOf={(row) => row.name}
      status={(row) => ({ value: row.status, label: row.status })}
      transitions={(row) => MODEL_TRANSITIONS[row.status]}
      readOnly={(row) => row.status === 'archived'}
      deleteNote="A model that an audience or signal still uses cannot be deleted; archive it instead."
      blockers={(row) => [
        { source: AUDIENCES, param: 'model_instance', id: row.id },
        { source: SIGNALS, param: 'model_instance', id: row.id },
      ]}
      form={(args) => <ModelForm {...args} />}
    >
      {(row) =>
        Object.keys(row.metrics).length > 0 ? (
          <section class="panel" aria-label="Metrics">
            <h2>Metrics (version {row.version})</h2>
            <pre class="code">{JSON.stringify(row.metrics, null, 2)}</pre>
          </section>
        ) : null
      }
    </ResourceEditor>
  );
}

function ModelForm(props: { row: ModelInstance | null; readOnly: boolean; onSaved: (row: ModelInstance) => void }) {
  const { row } = props;
  const form = useForm({
    name: row?.name ?? '',
    model_type: row?.model_type ?? 'propensity',
    base_model: row?.base_model ?? '',
    parameters: JSON.stringify(row?.parameters ?? {}, null, 2),
  });
  const { values } = form;

  const save = () =>
    form.submit(async () => {
      const body = {
        name: values.name,
        model_type: values.model_type,
        base_model: values.base_model,
        parameters: parseJsonObject(values.parameters, 'parameters'),
      };
      props.onSaved(row ? await api<ModelInstance>('PATCH', `${API}${row.id}/`, body) : await api<ModelInstance>('POST', API, body));
    });

  return (
    <ResourceForm
      label={row ? 'Edit model' : 'New model'}
      form={form}
      readOnly={props.readOnly}
      submitLabel={row ? 'Save changes' : 'Create model'}
      cancelHref={APP}
      onSubmit={() => void save()}
    >
      <TextField label="Name" {...form.bind('name')} required maxLength={255} />
      <FieldRow>
        <SelectField label="Type" {...form.bind('model_type')} required options={enumOptions(MODEL_TYPES)} />
        <TextField label="Base model" {...form.bind('base_model')} required maxLength={100} hint="For example gbm-v3." />
      </FieldRow>
      <TextArea label="Parameters (JSON)" {...form.bind('parameters')} code rows={6} hint="A JSON object." />
    </ResourceForm>
  );
}
