import { useState } from 'preact/hooks';
import { type Problem, ProblemError } from '../api/client';

/**
 * A form's values, the API's answer to its last submit, and the messages for one field: the
 * `errors` entries under its name or below it (`rules.a.b` belongs to `rules`). `bind(name)` gives
 * a text, number or select field everything it shows: its name, value, setter and messages.
 */
export function useForm<T extends Record<string, unknown>>(initial: T) {
  const [values, setValues] = useState<T>(initial);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);

  const set =
    <K extends keyof T>(name: K) =>
    (value: T[K]) =>
      setValues((current) => ({ ...current, [name]: value }));

  const errorsFor = (name: string): string[] | undefined => {
    const entries = Object.entries(problem?.errors ?? {}).filter(
      ([field]) => field === name || field.startsWith(`${name}.`) || field.startsWith(`${name}[`),
    );
    if (entries.length === 0) return undefined;
    return entries.map(([field, messages]) =>
      field === name ? messages.join(' ') : `${field.slice(name.length + 1)}: ${messages.join(' ')}`,
    );
  };

  /** Runs `action`; an API problem stays on the form, anything else is rethrown. */
  const submit = async (action: () => Promise<void>) => {
    setBusy(true);
    setProblem(null);
    try {
      await action();
    } catch (error) {
      if (error instanceof ProblemError) setProblem(error.problem);
      else throw error;
    } finally {
      setBusy(false);
    }
  };

  const bind = <K extends keyof T & string>(name: K) => ({
    name,
    value: values[name] as string,
    onValue: (value: string) => set(name)(value as T[K]),
    errors: errorsFor(name),
  });

  return { values, setValues, set, bind, problem, setProblem, errorsFor, busy, submit };
}

/** A JSON object typed into a textarea, or a field error the API would give for it. */
export function parseJsonObject(text: string, field: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ProblemError({
      status: 400,
      code: 'validation_error',
      detail: 'Some fields are invalid.',
      errors: { [field]: ['Not valid JSON.'] },
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ProblemError({
      status: 400,
      code: 'validation_error',
      detail: 'Some fields are invalid.',
      errors: { [field]: ['Must be a JSON object.'] },
    });
  return value as Record<string, unknown>;
}

/** A number as a field's text ('' for none): the inverse of idOrNull. */
export function textOf(value: number | null | undefined): string {
  return value === null || value === undefined ? '' : String(value);
}

/** An id typed or chosen in a select ('' is none). */
export function idOrNull(value: string): number | null {
  return value === '' ? null : Number(value);
}
