import { useRoute } from 'preact-iso';
import { api } from '../api/client';
import type { Audience } from '../api/types';
import { EmptyState, Notice, PageHeader, StatusBadge, formatDate } from '../components/feedback';
import { CheckboxGroup, NumberField, SelectField, TextArea, TextField } from '../components/fields';
import { idOrNull, parseJsonObject, useForm } from '../components/form';
import { enumOptions, useChoices, withNone } from '../components/lookups';
import { FormProblem } from '../components/form-problem';
import { ResourceEditor, type Transition } from '../components/resource-editor';
import { orderingsOf, ResourceList } from '../components/resource-list';
import { useSession } from '../session';

const API = '/api/v1/audiences/';
const APP = '/app/audiences';
const STATUSES = ['draft', 'active', 'archived'] as const;
const SOURCE_TYPES = ['rules', 'model', 'upload'] as const;

export function AudiencesPage() {
  const { canWrite } = useSession();
  const { query } = useRoute();
  return (
    <>
      <PageHeader title="Audiences" description="Groups of people to target: by rules, by a model’s scores, or uploaded.">
        {canWrite ? (
          <a class="button button-primary" href={`${APP}/new`}>
            New audience
          </a>
        ) : null}
      </PageHeader>
      {query.deleted ? <Notice kind="success">The audience was deleted.</Notice> : null}
      <ResourceList<Audience>
        apiPath={API}
        appPath={APP}
        caption="Audiences"
        filters={[
          { name: 'status', label: 'Status', options: enumOptions(STATUSES) },
          { name: 'source_type', label: 'Source', options: enumOptions(SOURCE_TYPES) },
        ]}
        orderings={orderingsOf([
          { value: 'name', label: 'Name' },
          { value: 'created_at', label: 'Created' },
          { value: 'updated_at', label: 'Updated' },
          { value: 'status', label: 'Status' },
        ])}
        columns={[
          { label: 'Name', cell: (row) => <a href={`${APP}/${row.id}`}>{row.name}</a> },
          { label: 'Source', cell: (row) => row.source_type },
          { label: 'Status', cell: (row) => <StatusBadge status={row.status} /> },
          { label: 'Size', numeric: true, cell: (row) => (row.size === null ? '—' : row.size.toLocaleString()) },
          { label: 'Updated', cell: (row) => formatDate(row.updated_at) },
        ]}
        empty={
          <EmptyState title="No audiences yet">
            <p>An audience says who to reach: people matching rules, scored by a model, or an uploaded list.</p>
            {canWrite ? (
              <a class="button button-primary" href={`${APP}/new`}>
                Create your first audience
              </a>
            ) : null}
          </EmptyState>
        }
      />
    </>
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
    model_instance: row?.model_instance === null || row?.model_instance === undefined ? '' : String(row.model_instance),
    min_score: row?.min_score === null || row?.min_score === undefined ? '' : String(row.min_score),
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
    <form
      class="form"
      noValidate
      aria-label={row ? 'Edit audience' : 'New audience'}
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      <FormProblem
        problem={form.problem}
        fields={['name', 'description', 'source_type', 'model_instance', 'min_score', 'connections', 'rules']}
      />
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
        label="Source"
        name="source_type"
        required
        value={values.source_type}
        onValue={(value) => set('source_type')(value as Audience['source_type'])}
        options={enumOptions(SOURCE_TYPES)}
        errors={form.errorsFor('source_type')}
        disabled={props.readOnly}
      />
      {byModel ? (
        <div class="field-row">
          <SelectField
            label="Model"
            name="model_instance"
            required
            value={values.model_instance}
            onValue={set('model_instance')}
            options={withNone(models)}
            errors={form.errorsFor('model_instance')}
            disabled={props.readOnly}
          />
          <NumberField
            label="Minimum score"
            name="min_score"
            hint="Between 0 and 1; empty for none."
            min={0}
            max={1}
            step="any"
            value={values.min_score}
            onValue={set('min_score')}
            errors={form.errorsFor('min_score')}
            disabled={props.readOnly}
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
        disabled={props.readOnly}
      />
      <TextArea
        label="Rules (JSON)"
        name="rules"
        code
        rows={6}
        hint="A JSON object, at most 64 KiB."
        value={values.rules}
        onValue={set('rules')}
        errors={form.errorsFor('rules')}
        disabled={props.readOnly}
      />
      {props.readOnly ? null : (
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={form.busy}>
            {form.busy ? 'Saving…' : row ? 'Save changes' : 'Create audience'}
          </button>
          <a class="button" href={APP}>
            Cancel
          </a>
        </div>
      )}
    </form>
  );
}
