import { isDeepStrictEqual } from 'node:util';

/**
 * One writable field of a resource: its name in the API, the entity property it is stored in, and
 * what a create without it gets. A resource lists its fields once, in a table that drives create,
 * PATCH merge, change detection and assignment in its service, so adding a field is one line here
 * and not one line in each of four hand lists.
 */
export interface WritableField<E, K extends keyof E = keyof E> {
  api: string;
  property: K;
  /** The value of a create that leaves the field out; none when the DTO requires the field. */
  initial?: E[K];
  /**
   * PATCH: `null` is a value of this field (it clears it). For the other fields the DTO refuses
   * null, and a null that reached here would mean "unchanged".
   */
  nullable?: boolean;
  /** JSON fields: jsonb keeps no key order, so values are compared structurally. */
  json?: boolean;
}

/**
 * The writable fields of entity E, in API order. Declare a table `as const satisfies
 * FieldTable<Entity>`, so that its state type (StateOf) names exactly its properties.
 */
export type FieldTable<E> = readonly { [K in keyof E]-?: WritableField<E, K> }[keyof E][];

/** The values of the properties a table names. */
export type StateOf<E, T extends FieldTable<E>> = Pick<E, T[number]['property']>;

type Input = object;

function inputValue(input: Input, api: string): unknown {
  return (input as Record<string, unknown>)[api];
}

/** The state a create writes: each field from the input, else its initial value. */
export function createdState<E, T extends FieldTable<E>>(table: T, input: Input): StateOf<E, T> {
  const state: Record<string, unknown> = {};
  for (const field of table) {
    const value = inputValue(input, field.api);
    state[field.property as string] = value === undefined || value === null ? field.initial : value;
  }
  return state as StateOf<E, T>;
}

/** What a create that names none of the optional fields answers for them, by API name (for the document's examples). */
export function initialValues<E>(table: FieldTable<E>): Record<string, unknown> {
  return Object.fromEntries(table.filter((field) => 'initial' in field).map((field) => [field.api, field.initial]));
}

/** PATCH: the input's fields over the stored object's. */
export function mergedState<E, T extends FieldTable<E>>(table: T, stored: E, input: Input): StateOf<E, T> {
  const state: Record<string, unknown> = {};
  for (const field of table) {
    const value = inputValue(input, field.api);
    const keep = value === undefined || (value === null && !field.nullable);
    state[field.property as string] = keep ? stored[field.property] : value;
  }
  return state as StateOf<E, T>;
}

/** The API names of the fields whose value `next` changes. */
export function changedFields<E, T extends FieldTable<E>>(table: T, stored: E, next: StateOf<E, T>): string[] {
  return table
    .filter((field) => {
      const before = stored[field.property];
      const after = (next as Partial<E>)[field.property];
      return field.json ? !isDeepStrictEqual(before, after) : before !== after;
    })
    .map((field) => field.api);
}

/** Copies the table's properties of `next` onto the stored object, before it is saved. */
export function assignFields<E, T extends FieldTable<E>>(table: T, stored: E, next: StateOf<E, T>): void {
  for (const field of table) stored[field.property] = (next as Partial<E>)[field.property] as E[typeof field.property];
}
