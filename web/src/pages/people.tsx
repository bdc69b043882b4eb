import { useRoute } from 'preact-iso';
import { api, ProblemError } from '../api/client';
import { CONSENT_VALUES } from '../api/enums';
import type { Consent, Person } from '../api/types';
import { EmptyState, formatDate, Notice, PageHeader } from '../components/feedback';
import { FieldRow, SelectField, TextArea, TextField } from '../components/fields';
import { ResourceForm } from '../components/form-problem';
import { parseJsonObject, useForm } from '../components/form';
import { enumOptions } from '../components/lookups';
import { ResourceEditor } from '../components/resource-editor';
import { ReferenceLinks } from '../components/reference-picker';
import { AUDIENCES } from '../components/references';
import { orderingsOf, ResourceList } from '../components/resource-list';
import { useSession } from '../session';

const API = '/api/v1/people/';
const APP = '/app/people';

const ORDERINGS = orderingsOf([
  { value: 'external_id', label: 'External id' },
  { value: 'created_at', label: 'Created' },
  { value: 'updated_at', label: 'Updated' },
]);

/** Keyed by the document's own values, so a kind the service adds fails the type check here until it has words. */
const MATCHED_KEY_LABELS: Record<Person['matched_keys'][number], string> = {
  email: 'Email',
  phone: 'Phone',
  address: 'Name and address',
  mobile_ad_id: 'Mobile ad id',
};

const CONSENT_LABELS: Record<keyof Consent, string> = {
  ad_user_data: 'Ad user data',
  ad_personalization: 'Ad personalization',
};

/**
 * What erasure does (SPEC 10.1, docs/people.md), said before and in the dialog: deleting a person
 * is not only a row gone here, it is a removal at every platform the person was sent to.
 */
const ERASURE_NOTE =
  'Deleting erases this person: they leave every audience at once, the next sync removes them from the ad platforms, and no hash of them is kept after that. This cannot be undone.';

/**
 * The person routes answer codes, not sentences, under their field paths (docs/people.md); these
 * are the ones a write from this page can meet.
 */
const CODE_WORDS: Record<string, string> = {
  invalid_external_id: 'Enter an external id of 1 to 255 characters.',
  external_id_taken: 'Another person in this workspace already has this external id.',
  invalid_traits: 'Traits must be a JSON object.',
  too_many_traits: 'A person can have at most 100 traits.',
  invalid_trait_key: 'Trait keys are 1 to 64 letters, digits, “_”, “.” or “-”.',
  invalid_trait_value: 'A trait’s value must be text (up to the allowed length), a number, or true or false.',
  invalid_consent: 'Choose granted, denied or unspecified.',
  unknown_consent: 'Only ad user data and ad personalization consent can be set.',
  unknown_field: 'This field cannot be changed here.',
};

/** A person write's problem with its codes in words, and consent's paths named as this form's fields. */
function inWords(error: unknown): unknown {
  if (!(error instanceof ProblemError) || !error.problem.errors) return error;
  const errors = Object.fromEntries(
    Object.entries(error.problem.errors).map(([field, codes]) => [
      field.startsWith('consent.') ? field.slice('consent.'.length) : field,
      codes.map((code) => CODE_WORDS[code] ?? code),
    ]),
  );
  return new ProblemError({ ...error.problem, errors });
}

export function MatchedKeys(props: { keys: Person['matched_keys'] }) {
  if (props.keys.length === 0) return <span class="reason">None</span>;
  return (
    <ul class="badges">
      {props.keys.map((key) => (
        <li key={key} class="badge">
          {MATCHED_KEY_LABELS[key] ?? key}
        </li>
      ))}
    </ul>
  );
}

function ConsentBadges(props: { consent: Consent }) {
  return (
    <ul class="badges">
      {(Object.keys(CONSENT_LABELS) as (keyof Consent)[]).map((key) => (
        <li key={key} class={`badge badge-${props.consent[key]}`}>
          {CONSENT_LABELS[key]}: {props.consent[key]}
        </li>
      ))}
    </ul>
  );
}

export function PeoplePage() {
  const { query } = useRoute();
  const { canWrite } = useSession();
  return (
    <>
      <PageHeader
        title="People"
        description="The people your audiences are made of. Emails, phones and names are kept only as hashes, and no identifier is ever shown."
      >
        {canWrite ? (
          <a class="button button-primary" href="/app/imports">
            Import people
          </a>
        ) : null}
      </PageHeader>
      {query.deleted ? <Notice kind="success">The person was erased.</Notice> : null}
      <ResourceList<Person>
        apiPath={API}
        appPath={APP}
        caption="People"
        filters={[]}
        orderings={ORDERINGS}
        search={{ param: 'external_id', label: 'Find by external id' }}
        columns={[
          { label: 'External id', cell: (row) => <a href={`${APP}/${row.id}`}>{row.external_id}</a> },
          { label: 'Matched keys', cell: (row) => <MatchedKeys keys={row.matched_keys} /> },
          { label: 'Consent', cell: (row) => <ConsentBadges consent={row.consent} /> },
          { label: 'Updated', cell: (row) => formatDate(row.updated_at) },
        ]}
        empty={
          <EmptyState title="No people yet">
            <p>
              People arrive from a CSV file on the <a href="/app/imports">Imports</a> page, or through the API: send them to POST
              /api/v1/people/batch/, up to 1,000 at a time.
            </p>
          </EmptyState>
        }
      />
    </>
  );
}

export function PersonPage() {
  const { params } = useRoute();
  return (
    <ResourceEditor<Person>
      key={params.id}
      // There is no page to create a person: "new" is not a number, so it is a page not found.
      id={params.id === 'new' ? 'not-a-person' : params.id}
      apiPath={API}
      appPath={APP}
      noun="person"
      plural="people"
      titleOf={(row) => row.external_id}
      deleteNote={ERASURE_NOTE}
      form={(args) =>
        args.row ? (
          <>
            <PersonFacts row={args.row} />
            {args.readOnly ? null : <PersonForm row={args.row} onSaved={args.onSaved} />}
          </>
        ) : (
          <></>
        )
      }
    />
  );
}

function PersonFacts(props: { row: Person }) {
  const { row } = props;
  const traits = Object.entries(row.traits);
  return (
    <>
      <section class="panel" aria-labelledby="keys-heading">
        <h2 id="keys-heading">Matched keys</h2>
        <p class="reason">The kinds of identifier the platforms can match this person on. The identifiers themselves are never shown.</p>
        <MatchedKeys keys={row.matched_keys} />
      </section>
      <section class="panel" aria-labelledby="consent-heading">
        <h2 id="consent-heading">Consent</h2>
        <dl class="facts">
          {(Object.keys(CONSENT_LABELS) as (keyof Consent)[]).map((key) => [
            <dt key={`${key}-term`}>{CONSENT_LABELS[key]}</dt>,
            <dd key={`${key}-value`}>
              <span class={`badge badge-${row.consent[key]}`}>{row.consent[key]}</span>
            </dd>,
          ])}
        </dl>
      </section>
      <section class="panel" aria-labelledby="traits-heading">
        <h2 id="traits-heading">Traits</h2>
        {traits.length === 0 ? (
          <p class="reason">No traits.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Traits</caption>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Value</th>
                </tr>
              </thead>
              <tbody>
                {traits.map(([key, value]) => (
                  <tr key={key}>
                    <th scope="row">{key}</th>
                    <td>{String(value)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section class="panel" aria-labelledby="audiences-heading">
        <h2 id="audiences-heading">Audiences</h2>
        {row.audiences.length === 0 ? (
          <p class="reason">Not in any audience yet.</p>
        ) : (
          <>
            <p class="reason">As of each audience’s last computation of its members.</p>
            <ReferenceLinks source={AUDIENCES} ids={row.audiences.map(String)} />
          </>
        )}
      </section>
    </>
  );
}

function PersonForm(props: { row: Person; onSaved: (row: Person) => void }) {
  const { row } = props;
  const form = useForm({
    external_id: row.external_id,
    ad_user_data: row.consent.ad_user_data,
    ad_personalization: row.consent.ad_personalization,
    traits: JSON.stringify(row.traits, null, 2),
  });
  const { values } = form;

  const save = () =>
    form.submit(async () => {
      const traits = parseJsonObject(values.traits, 'traits');
      // A PATCH merges traits: a key taken out of the text is removed by sending it as null.
      const removed = Object.keys(row.traits).filter((key) => !(key in traits));
      const body = {
        ...(values.external_id.trim() === row.external_id ? {} : { external_id: values.external_id }),
        consent: { ad_user_data: values.ad_user_data, ad_personalization: values.ad_personalization },
        traits: { ...traits, ...Object.fromEntries(removed.map((key) => [key, null])) },
      };
      try {
        props.onSaved(await api<Person>('PATCH', `${API}${row.id}/`, body));
      } catch (error) {
        throw inWords(error);
      }
    });

  return (
    <>
      <h2>Edit</h2>
      <ResourceForm
        label="Edit person"
        form={form}
        readOnly={false}
        submitLabel="Save changes"
        cancelHref={APP}
        onSubmit={() => void save()}
      >
        <TextField label="External id" {...form.bind('external_id')} required maxLength={255} />
        <FieldRow>
          <SelectField label={CONSENT_LABELS.ad_user_data} {...form.bind('ad_user_data')} options={enumOptions(CONSENT_VALUES)} />
          <SelectField
            label={CONSENT_LABELS.ad_personalization}
            {...form.bind('ad_personalization')}
            options={enumOptions(CONSENT_VALUES)}
          />
        </FieldRow>
        <TextArea
          label="Traits (JSON)"
          {...form.bind('traits')}
          code
          rows={6}
          hint="A JSON object of at most 100 keys; each value text, a number, or true or false. A key taken out is removed."
        />
      </ResourceForm>
    </>
  );
}
