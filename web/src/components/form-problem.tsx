import type { ComponentChildren } from 'preact';
import type { Problem } from '../api/client';
import { useId } from 'preact/hooks';
import { Notice } from './feedback';
import { ReadOnlyFields } from './fields';

/**
 * What went wrong with a submit, above the form. Messages for the form's own fields (its values'
 * names) are shown beside those fields; any other (`non_field_errors`, a field this form does not
 * show) is listed here.
 */
export function FormProblem(props: { form: { problem: Problem | null; values: object } }) {
  const { problem, values } = props.form;
  if (!problem) return null;
  const fields = Object.keys(values);
  const elsewhere = Object.entries(problem.errors ?? {}).filter(([field]) => !fields.includes(field.split(/[.[]/, 1)[0]));
  const besideFields = Object.keys(problem.errors ?? {}).length > elsewhere.length;
  return (
    <Notice kind="error">
      <span>{besideFields ? 'Some fields need attention: see the messages below them.' : problem.detail}</span>
      {elsewhere.length > 0 ? (
        <ul>
          {elsewhere.map(([field, messages]) => (
            <li key={field}>{field === 'non_field_errors' ? messages.join(' ') : `${field}: ${messages.join(' ')}`}</li>
          ))}
        </ul>
      ) : null}
      {problem.request_id && problem.status !== 400 ? <small class="request-id">Request id {problem.request_id}</small> : null}
    </Notice>
  );
}

/**
 * An object's create or edit form: the problem above, the fields, and save and cancel below. A
 * read-only object (a viewer's page, an archived object) is no form at all: the same fields show
 * their values as a list of facts, with nothing to type in, nothing greyed out and no required
 * marks (issue 25, item 20).
 */
export function ResourceForm(props: {
  label: string;
  form: { problem: Problem | null; values: object; busy: boolean };
  readOnly: boolean;
  submitLabel: string;
  cancelHref: string;
  onSubmit: () => void;
  children: ComponentChildren;
}) {
  const headingId = useId();
  if (props.readOnly)
    return (
      <section class="panel" aria-labelledby={headingId}>
        <h2 id={headingId}>Details</h2>
        <ReadOnlyFields.Provider value={true}>
          <dl class="facts fields-read-only">{props.children}</dl>
        </ReadOnlyFields.Provider>
      </section>
    );
  return (
    <form
      class="form"
      noValidate
      aria-label={props.label}
      onSubmit={(event) => {
        event.preventDefault();
        props.onSubmit();
      }}
    >
      <FormProblem form={props.form} />
      {props.children}
      <div class="actions">
        <button type="submit" class="button button-primary" disabled={props.form.busy}>
          {props.form.busy ? 'Saving…' : props.submitLabel}
        </button>
        <a class="button" href={props.cancelHref}>
          Cancel
        </a>
      </div>
    </form>
  );
}
