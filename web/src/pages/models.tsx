import { useRoute } from 'preact-iso';
import { api } from '../api/client';
import type { ModelInstance } from '../api/types';
import { EmptyState, Notice, PageHeader, StatusBadge, formatDate } from '../components/feedback';
import { SelectField, TextArea, TextField } from '../components/fields';
import { FormProblem } from '../components/form-problem';
import { parseJsonObject, useForm } from '../components/form';
import { enumOptions } from '../components/lookups';
import { ResourceEditor, type Transition } from '../components/resource-editor';
import { orderingsOf, ResourceList } from '../components/resource-list';
import { useSession } from '../session';

const API = '/api/v1/ai-model-instances/';
const APP = '/app/models';
const MODEL_TYPES = ['propensity', 'lifetime_value', 'churn', 'lookalike'] as const;
const STATUSES = ['pending', 'training', 'ready', 'failed', 'archived'] as const;

export function ModelsPage() {
  const { canWrite } = useSession();
  const { query } = useRoute();
  return (
    <>
      <PageHeader title="AI models" description="Predictive models of your workspace: propensity, lifetime value, churn and lookalike.">
        {canWrite ? (
          <a class="button button-primary" href={`${APP}/new`}>
            New model
          </a>
        ) : null}
      </PageHeader>
      {query.deleted ? <Notice kind="success">The model was deleted.</Notice> : null}
      <ResourceList<ModelInstance>
        apiPath={API}
        appPath={APP}
        caption="AI models"
        filters={[
          { name: 'status', label: 'Status', options: enumOptions(STATUSES) },
          { name: 'model_type', label: 'Type', options: enumOptions(MODEL_TYPES) },
        ]}
        orderings={orderingsOf([
          { value: 'name', label: 'Name' },
          { value: 'created_at', label: 'Created' },
          { value: 'updated_at', label: 'Updated' },
          { value: 'status', label: 'Status' },
        ])}
        columns={[
          { label: 'Name', cell: (row) => <a href={`${APP}/${row.id}`}>{row.name}</a> },
          { label: 'Type', cell: (row) => row.model_type.replace(/_/g, ' ') },
          { label: 'Base model', cell: (row) => <code>{row.base_model}</code> },
          { label: 'Status', cell: (row) => <StatusBadge status={row.status} /> },
          { label: 'Version', numeric: true, cell: (row) => row.version },
          { label: 'Updated', cell: (row) => formatDate(row.updated_at) },
        ]}
        empty={
          <EmptyState title="No models yet">
            <p>A model instance scores people for audiences and signals.</p>
            {canWrite ? (
              <a class="button button-primary" href={`${APP}/new`}>
                Create your first model
              </a>
            ) : null}
          </EmptyState>
        }
      />
    </>
  );
}

/** SPEC section 3: pending→training, training→ready/failed, ready/failed→training, any→archived. */
function transitions(row: ModelInstance): Transition[] {
  const archive = { to: 'archived', label: 'Archive', confirm: 'An archived model is final: it can never change again.' };
  switch (row.status) {
    case 'pending':
      return [{ to: 'training', label: 'Start training' }, archive];
    case 'training':
      return [{ to: 'ready', label: 'Mark ready' }, { to: 'failed', label: 'Mark failed' }, archive];
    case 'ready':
    case 'failed':
      return [{ to: 'training', label: 'Retrain' }, archive];
    default:
      return [];
  }
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
      transitions={transitions}
      readOnly={(row) => row.status === 'archived'}
      deleteNote="A model that an audience or signal still uses cannot be deleted; archive it instead."
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
  const { values, set } = form;

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
    <form
      class="form"
      noValidate
      aria-label={row ? 'Edit model' : 'New model'}
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      <FormProblem problem={form.problem} fields={['name', 'model_type', 'base_model', 'parameters']} />
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
      <div class="field-row">
        <SelectField
          label="Type"
          name="model_type"
          required
          value={values.model_type}
          onValue={(value) => set('model_type')(value as ModelInstance['model_type'])}
          options={enumOptions(MODEL_TYPES)}
          errors={form.errorsFor('model_type')}
          disabled={props.readOnly}
        />
        <TextField
          label="Base model"
          name="base_model"
          required
          maxLength={100}
          hint="For example gbm-v3."
          value={values.base_model}
          onValue={set('base_model')}
          errors={form.errorsFor('base_model')}
          disabled={props.readOnly}
        />
      </div>
      <TextArea
        label="Parameters (JSON)"
        name="parameters"
        code
        rows={6}
        hint="A JSON object."
        value={values.parameters}
        onValue={set('parameters')}
        errors={form.errorsFor('parameters')}
        disabled={props.readOnly}
      />
      {props.readOnly ? null : (
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={form.busy}>
            {form.busy ? 'Saving…' : row ? 'Save changes' : 'Create model'}
          </button>
          <a class="button" href={APP}>
            Cancel
          </a>
        </div>
      )}
    </form>
  );
}
