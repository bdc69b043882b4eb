import { ApiError } from '../errors/api-error.js';
import { choiceSchema, ID_SCHEMA, MAX_ID, MESSAGES } from './fields.js';

/** Why a query value was refused: the message goes under the parameter's name. */
class Refusal {
  constructor(readonly message: string) {}
}

/** A query parameter's text (the last of repeats, never empty) to its typed value. */
type Read = (text: string) => unknown;

/** One list filter of a query DTO, as the reader and the API document see it. */
export interface QueryField {
  name: string;
  description: string;
  schema: Record<string, unknown>;
  read: Read;
}

/**
 * The filters of each query DTO in declaration order. Kept beside the class rather than in
 * class-validator's storage: a list request reads them with one loop, no instance transform and no
 * validation pass (list requests are the hot path; docs/benchmarks.md).
 */
const FIELDS = new WeakMap<object, QueryField[]>();

function queryField(schema: Record<string, unknown>, read: Read, description: string): PropertyDecorator {
  return (target, property) => {
    const fields = FIELDS.get(target.constructor) ?? [];
    FIELDS.set(target.constructor, [...fields, { name: String(property), description, schema, read }]);
  };
}

export interface FilterDoc {
  description: string;
}

function integerOf(text: string): number | Refusal {
  if (!/^-?\d{1,16}$/.test(text) || Math.abs(Number(text)) > MAX_ID) return new Refusal(MESSAGES.notInteger);
  return Number(text);
}

/**
 * An object id to filter by. Any integer is read (one that is no id matches nothing), so only a
 * value that is not an integer is refused.
 */
export function IdFilter({ description }: FilterDoc): PropertyDecorator {
  return queryField({ ...ID_SCHEMA }, integerOf, description);
}

/** One of `choices`; integer choices are read as integers first, so `?status=x` is "A valid integer is required." */
export function ChoiceFilter(
  choices: readonly (string | number)[],
  { description, names }: FilterDoc & { names?: string[] },
): PropertyDecorator {
  const numeric = choices.every((choice) => typeof choice === 'number');
  const choose = (value: string | number) => (choices.includes(value) ? value : new Refusal(MESSAGES.choice(value, choices)));
  return queryField(
    { ...choiceSchema(choices), ...(names ? { 'x-enum-varnames': names } : {}) },
    numeric
      ? (text) => {
          const value = integerOf(text);
          return value instanceof Refusal ? value : choose(value);
        }
      : choose,
    description,
  );
}

export const SEARCH_MAX_LENGTH = 255;

/** `search`: read as a case-insensitive "contains" LIKE pattern, its wildcards escaped; blank is no filter. */
export function SearchFilter({ description }: FilterDoc): PropertyDecorator {
  return queryField(
    { type: 'string', maxLength: SEARCH_MAX_LENGTH },
    (text) => {
      const value = text.trim();
      if (!value) return undefined;
      if (value.length > SEARCH_MAX_LENGTH) return new Refusal(MESSAGES.tooLong(SEARCH_MAX_LENGTH));
      return `%${value.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
    },
    description,
  );
}

/** A string compared as given (after trimming), e.g. an external id; blank is no filter. */
export function ExactTextFilter({ maxLength, description }: FilterDoc & { maxLength: number }): PropertyDecorator {
  return queryField(
    { type: 'string', minLength: 1, maxLength },
    (text) => {
      const value = text.trim();
      if (!value) return undefined;
      return value.length > maxLength ? new Refusal(MESSAGES.tooLong(maxLength)) : value;
    },
    description,
  );
}

/** The filters a query DTO declares, in declaration order. */
export function queryFieldsOf(dto: object): readonly QueryField[] {
  return FIELDS.get(dto) ?? [];
}

/**
 * Reads a query string object into a query DTO (SPEC section 4): unknown parameters are ignored,
 * an absent or empty one is no filter, a repeated one counts by its last value, and the first bad
 * value is a 400 under its parameter's name.
 */
export function readQuery<T extends object>(dto: new () => T, query: Record<string, unknown>): T {
  const filters = new dto();
  for (const field of queryFieldsOf(dto)) {
    const raw = query[field.name];
    const text = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (typeof text !== 'string' || text === '') continue;
    const value = field.read(text);
    if (value instanceof Refusal) throw ApiError.field(field.name, value.message);
    if (value !== undefined) (filters as Record<string, unknown>)[field.name] = value;
  }
  return filters;
}
