import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api, ProblemError, queryOf } from '../api/client';
import type { Page } from '../api/types';
import { type Common, describedBy, Fact, FieldFrame, FieldNotes, useReadOnlyFields } from './fields';
import type { ReferenceSource } from './references';

/** Typing waits this long for the next key before the list is asked: one request per pause, not one per key. */
const DEBOUNCE_MS = 250;
/** An object's id as the API takes it in a path. */
const ID = /^[1-9][0-9]{0,15}$/;
/** Objects per answer. More are found by typing more of a name, as the list says. */
const PAGE_SIZE = 20;

interface Choice {
  value: string;
  label: string;
  detail?: string;
}

/**
 * The names of the objects with these ids (as their select-like fields hold them, strings), read
 * one by one from the API when not already known: the object chosen may be far past the first
 * page of any list (issue 25, item 6). An id the API does not find is named as such.
 */
function useReferenceLabels<T extends { id: number }>(source: ReferenceSource<T>, ids: string[]) {
  const labels = useRef(new Map<string, string>());
  const [, setVersion] = useState(0);
  const missing = ids.filter((id) => id !== '' && !labels.current.has(id));
  useEffect(() => {
    let current = true;
    for (const id of missing) {
      const named = (found: boolean) => `${source.noun.charAt(0).toUpperCase()}${source.noun.slice(1)} ${id}${found ? '' : ' (not found)'}`;
      // Only a number goes into the path: an id read from an address ("../x") must not reach another route.
      if (!ID.test(id)) {
        labels.current.set(id, named(false));
        continue;
      }
      api<T>('GET', `${source.apiPath}${id}/`).then(
        (row) => {
          labels.current.set(id, source.labelOf(row));
          if (current) setVersion((version) => version + 1);
        },
        (error: unknown) => {
          labels.current.set(id, named(!(error instanceof ProblemError && error.problem.status === 404)));
          if (current) setVersion((version) => version + 1);
        },
      );
    }
    return () => {
      current = false;
    };
  }, [source.apiPath, missing.join(',')]);
  return {
    labelOf: (id: string) => labels.current.get(id),
    remember: (id: string, label: string) => labels.current.set(id, label),
  };
}

/**
 * One object of `source`, chosen by typing part of its name: an editable combobox with a list
 * popup (WAI-ARIA 1.2, the APG's "list autocomplete" pattern). Each pause in typing asks the API
 * for the names that contain the text, so any object can be found, not only a first page. Down
 * and Up move through the list (Down opens it), Enter chooses, Escape closes it and puts back the
 * name chosen before; leaving the field with the text emptied chooses none.
 *
 * Not an `<input list>` with a `<datalist>`: a datalist holds text, not ids, so two objects of the
 * same name could not be told apart, the id would have to be read back from the typed name, and
 * browsers neither announce "searching" or "no match" nor keep a list they did not filter
 * themselves in step with the API's answers.
 */
export function ReferencePicker<T extends { id: number }>(props: {
  id: string;
  label: string;
  source: ReferenceSource<T>;
  /** The chosen object's id as text, '' for none. */
  value: string;
  onValue: (value: string) => void;
  /** The first option, choosing none ("None", or "Any" in a filter); absent where a choice is required. */
  noneLabel?: string;
  /** Ids not to offer (the ones a list of destinations already has). */
  exclude?: string[];
  required?: boolean;
  invalid?: boolean;
  describedBy?: string;
  placeholder?: string;
}) {
  const { source } = props;
  const listboxId = `${props.id}-listbox`;
  const statusId = `${props.id}-status`;
  const labels = useReferenceLabels(source, [props.value]);
  const chosenLabel = props.value === '' ? '' : (labels.labelOf(props.value) ?? '');
  const [text, setText] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  const [answer, setAnswer] = useState<{ choices: Choice[]; count: number; search: string } | null>(null);
  const [failed, setFailed] = useState(false);
  const [active, setActive] = useState(-1);
  const listbox = useRef<HTMLUListElement>(null);
  const input = useRef<HTMLInputElement>(null);

  // What is being searched for: the typed text, or nothing (the first names) when the list was opened without typing.
  const search = (text ?? '').trim();

  useEffect(() => {
    if (!open) return;
    let current = true;
    const timer = setTimeout(() => {
      const query = queryOf({ search, ordering: 'name', page_size: PAGE_SIZE });
      api<Page<T>>('GET', `${source.apiPath}${query}`).then(
        (page) => {
          if (!current) return;
          setFailed(false);
          setAnswer({
            search,
            count: page.count,
            choices: page.results.map((row) => ({ value: String(row.id), label: source.labelOf(row), detail: source.detailOf?.(row) })),
          });
        },
        () => current && setFailed(true),
      );
    }, DEBOUNCE_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [open, search, source.apiPath]);

  const excluded = new Set(props.exclude ?? []);
  const found = (answer?.choices ?? []).filter((choice) => !excluded.has(choice.value));
  const options: Choice[] = [...(props.noneLabel === undefined ? [] : [{ value: '', label: props.noneLabel }]), ...found];
  const expanded = open && options.length > 0;
  const waiting = open && (answer === null || answer.search !== search) && !failed;

  useEffect(() => {
    if (active >= 0) listbox.current?.querySelector(`#${CSS.escape(`${props.id}-option-${active}`)}`)?.scrollIntoView({ block: 'nearest' });
  }, [active]);

  const close = () => {
    setOpen(false);
    setActive(-1);
  };
  const choose = (choice: Choice) => {
    if (choice.value !== '') labels.remember(choice.value, choice.label);
    setText(null);
    close();
    if (choice.value !== props.value) props.onValue(choice.value);
  };
  /** Leaving the field: an emptied text chooses none; any other text not chosen from the list gives way to the chosen name. */
  const settle = () => {
    close();
    if (text !== null && text.trim() === '' && props.value !== '') props.onValue('');
    setText(null);
  };
  const openList = () => {
    setFailed(false);
    setOpen(true);
    setActive(-1);
  };
  const move = (step: 1 | -1) => {
    if (!expanded) return openList();
    setActive((index) => (index + step + options.length + (index < 0 && step < 0 ? 1 : 0)) % options.length);
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'ArrowDown') {
      event.preventDefault();
      if (event.altKey) openList();
      else move(1);
    } else if (event.key === 'ArrowUp') {
      event.preventDefault();
      move(-1);
    } else if (event.key === 'Enter') {
      // While the list is open, Enter chooses from it, never submits the form around it.
      if (!open) return;
      event.preventDefault();
      if (active >= 0 && active < options.length) choose(options[active]!);
    } else if (event.key === 'Escape') {
      // Handled here, so a dialog around the field stays open.
      if (!open && text === null) return;
      event.preventDefault();
      event.stopPropagation();
      close();
      setText(null);
    }
  };

  const message = failed
    ? `The ${source.plural} could not be loaded. Type again to retry.`
    : waiting
      ? 'Searching…'
      : !open || !answer
        ? ''
        : answer.count === 0
          ? search
            ? `No ${source.noun} matches “${search}”.`
            : `No ${source.plural} yet.`
          : answer.count > answer.choices.length
            ? `${answer.choices.length} of ${answer.count} ${source.plural} shown: type more of a name to find others.`
            : `${answer.count} ${answer.count === 1 ? source.noun : source.plural} found.`;

  return (
    <div class={`picker${open ? ' picker-open' : ''}`}>
      <div class="picker-control">
        <input
          ref={input}
          id={props.id}
          type="text"
          role="combobox"
          autoComplete="off"
          spellcheck={false}
          aria-autocomplete="list"
          aria-expanded={expanded}
          aria-controls={listboxId}
          aria-activedescendant={expanded && active >= 0 ? `${props.id}-option-${active}` : undefined}
          aria-required={props.required ? true : undefined}
          aria-invalid={props.invalid ? true : undefined}
          aria-describedby={[props.describedBy, open ? statusId : ''].filter(Boolean).join(' ') || undefined}
          placeholder={props.placeholder ?? `Type to search ${source.plural}`}
          value={text ?? chosenLabel}
          maxLength={255}
          onInput={(event) => {
            setText(event.currentTarget.value);
            setFailed(false);
            setOpen(true);
            setActive(-1);
          }}
          onClick={() => (open ? undefined : openList())}
          onKeyDown={onKeyDown}
          onBlur={settle}
        />
        {/* For the mouse only, so out of the tab order and hidden from screen readers: from the keyboard, Down opens the list. */}
        <button
          type="button"
          class="picker-toggle"
          tabIndex={-1}
          aria-hidden="true"
          // The field keeps the focus: a click here must not count as leaving it.
          onMouseDown={(event) => event.preventDefault()}
          onClick={() => {
            if (open) close();
            else openList();
            input.current?.focus();
          }}
        >
          ▾
        </button>
      </div>
      <div class="picker-popup" hidden={!open}>
        <ul id={listboxId} ref={listbox} role="listbox" aria-label={props.label} hidden={!expanded}>
          {options.map((option, index) => (
            <li
              key={option.value}
              id={`${props.id}-option-${index}`}
              role="option"
              aria-selected={index === active}
              class={`picker-option${index === active ? ' picker-option-active' : ''}${option.value === props.value ? ' picker-option-chosen' : ''}`}
              // Choosing with the mouse must not blur the field first (which would settle it).
              onMouseDown={(event) => event.preventDefault()}
              onClick={() => choose(option)}
            >
              <span class="picker-label">{option.label}</span>
              {option.detail ? <span class="picker-detail">{option.detail}</span> : null}
            </li>
          ))}
        </ul>
        <p id={statusId} class="picker-status">
          {message}
        </p>
      </div>
      {/* Always in the page, so a screen reader hears "Searching…" and the count as they change. */}
      <p class="visually-hidden" role="status">
        {message}
      </p>
    </div>
  );
}

/** A form field that refers to one object (a signal's audience): the picker in its frame, or the object's name when read-only. */
export function ReferenceField<T extends { id: number }>(
  props: Common & { source: ReferenceSource<T>; value: string; onValue: (value: string) => void },
) {
  const id = useId();
  const readOnly = useReadOnlyFields();
  const labels = useReferenceLabels(props.source, readOnly ? [props.value] : []);
  if (readOnly)
    return (
      <Fact label={props.label}>
        {props.value === '' ? null : <ObjectLink source={props.source} value={props.value} labelOf={labels.labelOf} />}
      </Fact>
    );
  return (
    <FieldFrame id={id} {...props}>
      <ReferencePicker
        id={id}
        label={props.label}
        source={props.source}
        value={props.value}
        onValue={props.onValue}
        noneLabel={props.required ? undefined : 'None'}
        required={props.required}
        invalid={Boolean(props.errors?.length)}
        describedBy={describedBy(id, props.hint, props.errors)}
      />
    </FieldFrame>
  );
}

/**
 * A form field that refers to several objects (an audience's destination connections): the chosen
 * ones, each with a button that removes it, and a picker that adds one more.
 */
export function ReferenceListField<T extends { id: number }>(
  props: Common & { source: ReferenceSource<T>; values: string[]; onValues: (values: string[]) => void; empty: string },
) {
  const id = useId();
  const readOnly = useReadOnlyFields();
  const labels = useReferenceLabels(props.source, props.values);
  const named = (value: string) => labels.labelOf(value) ?? `${props.source.noun} ${value}`;
  if (readOnly)
    return (
      <Fact label={props.label}>
        {props.values.length === 0 ? null : (
          <ul class="plain-list">
            {props.values.map((value) => (
              <li key={value}>
                <ObjectLink source={props.source} value={value} labelOf={labels.labelOf} />
              </li>
            ))}
          </ul>
        )}
      </Fact>
    );
  return (
    <fieldset class={`field${props.errors?.length ? ' field-invalid' : ''}`} aria-describedby={describedBy(id, props.hint, props.errors)}>
      <legend>{props.label}</legend>
      {props.values.length === 0 ? (
        <p class="hint">{props.empty}</p>
      ) : (
        <ul class="chosen-list">
          {props.values.map((value) => (
            <li key={value}>
              <span>{named(value)}</span>
              <button
                type="button"
                class="button button-quiet"
                onClick={() => props.onValues(props.values.filter((existing) => existing !== value))}
              >
                Remove<span class="visually-hidden"> {named(value)}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <label for={`${id}-add`} class="sub-label">
        Add a {props.source.noun}
      </label>
      <ReferencePicker
        id={`${id}-add`}
        label={`Add a ${props.source.noun}`}
        source={props.source}
        value=""
        exclude={props.values}
        onValue={(value) => {
          if (value !== '' && !props.values.includes(value)) props.onValues([...props.values, value]);
        }}
      />
      <FieldNotes id={id} hint={props.hint} errors={props.errors} />
    </fieldset>
  );
}

/** Objects of `source` by id (a person's audiences), each named and linked to its page, read one by one as a picker reads its choice. */
export function ReferenceLinks<T extends { id: number }>(props: { source: ReferenceSource<T>; ids: string[] }) {
  const labels = useReferenceLabels(props.source, props.ids);
  return (
    <ul class="plain-list">
      {props.ids.map((value) => (
        <li key={value}>
          <ObjectLink source={props.source} value={value} labelOf={labels.labelOf} />
        </li>
      ))}
    </ul>
  );
}

/** An object's name, as a link to its page where it has one. */
function ObjectLink<T extends { id: number }>(props: {
  source: ReferenceSource<T>;
  value: string;
  labelOf: (id: string) => string | undefined;
}) {
  const label = props.labelOf(props.value) ?? `${props.source.noun} ${props.value}`;
  const page = props.source.pageOf?.(Number(props.value));
  return page ? <a href={page}>{label}</a> : <span>{label}</span>;
}
