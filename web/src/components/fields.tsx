import { type ComponentChildren, createContext } from 'preact';
import { useContext, useId } from 'preact/hooks';

/**
 * True inside a form that only shows an object (a viewer's page, an archived object): its fields
 * are then facts, a term and its value in the form's description list, with nothing to type in and
 * no required marks. Fields read it themselves, so a page writes its form once for both.
 */
export const ReadOnlyFields = createContext(false);

/** Whether the fields here are shown read-only (inside a read-only ResourceForm). */
export function useReadOnlyFields(): boolean {
  return useContext(ReadOnlyFields);
}

/** One field shown read-only: its label as the term, its value (or "None") as the description. */
export function Fact(props: { label: string; children?: ComponentChildren }) {
  const empty = props.children === undefined || props.children === null || props.children === '';
  return (
    <div class="fact">
      <dt>{props.label}</dt>
      <dd>{empty ? <span class="reason">None</span> : props.children}</dd>
    </div>
  );
}

/** Fields side by side on a wide screen; read-only, they are facts of the same list, so no wrapper. */
export function FieldRow(props: { children: ComponentChildren }) {
  const readOnly = useReadOnlyFields();
  return readOnly ? <>{props.children}</> : <div class="field-row">{props.children}</div>;
}

/** A labelled control with its hint and the API's messages for it (SPEC section 5 `errors`), tied by aria-describedby. */
export function FieldFrame(props: {
  id: string;
  label: string;
  hint?: string;
  errors?: string[];
  required?: boolean;
  children: ComponentChildren;
}) {
  return (
    <div class={`field${props.errors?.length ? ' field-invalid' : ''}`}>
      <label for={props.id}>
        {props.label}
        {props.required ? (
          <span class="required" aria-hidden="true">
            {' '}
            *
          </span>
        ) : null}
      </label>
      {props.children}
      <FieldNotes id={props.id} hint={props.hint} errors={props.errors} />
    </div>
  );
}

/** A field's hint and the API's messages for it, under the control; their ids are what `aria-describedby` names. */
export function FieldNotes(props: { id: string; hint?: string; errors?: string[] }) {
  return (
    <>
      {props.hint ? (
        <p class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      ) : null}
      {props.errors?.length ? (
        <ul class="field-errors" id={`${props.id}-errors`} data-field-error>
          {props.errors.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      ) : null}
    </>
  );
}

export function describedBy(id: string, hint?: string, errors?: string[]): string | undefined {
  const ids = [hint ? `${id}-hint` : '', errors?.length ? `${id}-errors` : ''].filter(Boolean).join(' ');
  return ids || undefined;
}

/** What every control of a field carries: its id and name, presence, and its accessible state and description. */
function controlAttributes(id: string, props: Common) {
  return {
    id,
    name: props.name,
    required: props.required,
    disabled: props.disabled,
    'aria-invalid': props.errors?.length ? ('true' as const) : undefined,
    'aria-describedby': describedBy(id, props.hint, props.errors),
  };
}

export interface Common {
  label: string;
  name: string;
  hint?: string;
  errors?: string[];
  required?: boolean;
  disabled?: boolean;
}

export function TextField(
  props: Common & {
    value: string;
    onValue: (value: string) => void;
    type?: 'text' | 'email' | 'password';
    maxLength?: number;
    autoComplete?: string;
  },
) {
  const id = useId();
  if (useReadOnlyFields()) return <Fact label={props.label}>{props.type === 'password' ? null : props.value}</Fact>;
  return (
    <FieldFrame id={id} {...props}>
      <input
        {...controlAttributes(id, props)}
        // Preact's input types are a union per `type`; the three here share every attribute used.
        type={(props.type ?? 'text') as 'text'}
        value={props.value}
        maxLength={props.maxLength}
        autoComplete={props.autoComplete}
        onInput={(event) => props.onValue(event.currentTarget.value)}
      />
    </FieldFrame>
  );
}

export function NumberField(
  props: Common & { value: string; onValue: (value: string) => void; min?: number; max?: number; step?: number | 'any' },
) {
  const id = useId();
  if (useReadOnlyFields()) return <Fact label={props.label}>{props.value}</Fact>;
  return (
    <FieldFrame id={id} {...props}>
      <input
        {...controlAttributes(id, props)}
        type="number"
        inputMode="decimal"
        value={props.value}
        min={props.min}
        max={props.max}
        step={props.step}
        onInput={(event) => props.onValue(event.currentTarget.value)}
      />
    </FieldFrame>
  );
}

export function TextArea(
  props: Common & { value: string; onValue: (value: string) => void; rows?: number; maxLength?: number; code?: boolean },
) {
  const id = useId();
  if (useReadOnlyFields())
    return (
      <Fact label={props.label}>{props.value.trim() === '' ? null : <pre class={props.code ? 'code' : 'text'}>{props.value}</pre>}</Fact>
    );
  return (
    <FieldFrame id={id} {...props}>
      <textarea
        {...controlAttributes(id, props)}
        rows={props.rows ?? 3}
        value={props.value}
        maxLength={props.maxLength}
        spellcheck={props.code ? false : undefined}
        class={props.code ? 'code' : undefined}
        onInput={(event) => props.onValue(event.currentTarget.value)}
      />
    </FieldFrame>
  );
}

export interface Option {
  value: string;
  label: string;
}

export function SelectField(props: Common & { value: string; onValue: (value: string) => void; options: Option[] }) {
  const id = useId();
  if (useReadOnlyFields())
    return <Fact label={props.label}>{props.options.find((option) => option.value === props.value)?.label ?? props.value}</Fact>;
  return (
    <FieldFrame id={id} {...props}>
      <select {...controlAttributes(id, props)} value={props.value} onChange={(event) => props.onValue(event.currentTarget.value)}>
        {props.options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}
