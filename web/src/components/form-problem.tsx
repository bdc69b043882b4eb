import type { ComponentChildren } from 'preact';
import type { Problem } from '../api/client';
import { Notice } from './feedback';

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
 * An object's create or edit form: the problem above, the fields (all disabled at once when the
 * object is read-only, by their fieldset), and save and cancel below unless read-only.
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
      <fieldset class="fields" disabled={props.readOnly}>
        {props.children}
      </fieldset>
      {props.readOnly ? null : (
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={props.form.busy}>
            {props.form.busy ? 'Saving…' : props.submitLabel}
          </button>
          <a class="button" href={props.cancelHref}>
            Cancel
          </a>
        </div>
      )}
    </form>
  );
}
