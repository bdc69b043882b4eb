import type { Problem } from '../api/client';
import { Notice } from './feedback';

/**
 * What went wrong with a submit, above the form. Messages for the form's own fields are shown
 * beside those fields; any other (`non_field_errors`, a field this form does not show) is listed here.
 */
export function FormProblem(props: { problem: Problem | null; fields: string[] }) {
  const { problem } = props;
  if (!problem) return null;
  const elsewhere = Object.entries(problem.errors ?? {}).filter(([field]) => !props.fields.includes(field.split(/[.[]/, 1)[0]));
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
