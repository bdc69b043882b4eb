import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

/** A labelled control with its hint and the API's messages for it (SPEC section 5 `errors`), tied by aria-describedby. */
function FieldFrame(props: {
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
function FieldNotes(props: { id: string; hint?: string; errors?: string[] }) {
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

function describedBy(id: string, hint?: string, errors?: string[]): string | undefined {
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

interface Common {
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

/** Several choices as checkboxes in a fieldset (an audience's destination connections). */
export function CheckboxGroup(
  props: Common & { values: string[]; onValues: (values: string[]) => void; options: Option[]; empty: string },
) {
  const id = useId();
  const toggle = (value: string, checked: boolean) =>
    props.onValues(checked ? [...props.values, value] : props.values.filter((existing) => existing !== value));
  return (
    <fieldset class={`field${props.errors?.length ? ' field-invalid' : ''}`} aria-describedby={describedBy(id, props.hint, props.errors)}>
      <legend>{props.label}</legend>
      {props.options.length === 0 ? <p class="hint">{props.empty}</p> : null}
      {props.options.map((option) => (
        <label key={option.value} class="checkbox">
          <input
            type="checkbox"
            name={props.name}
            value={option.value}
            checked={props.values.includes(option.value)}
            disabled={props.disabled}
            onChange={(event) => toggle(option.value, event.currentTarget.checked)}
          />
          {option.label}
        </label>
      ))}
      <FieldNotes id={id} hint={props.hint} errors={props.errors} />
    </fieldset>
  );
}
