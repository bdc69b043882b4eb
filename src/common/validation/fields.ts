import { applyDecorators } from '@nestjs/common';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { Allow, ValidateBy, type ValidationArguments } from 'class-validator';

/** DRF-style messages, the ones API clients of this kind of service expect (SPEC section 5 example). */
export const MESSAGES = {
  required: 'This field is required.',
  notNull: 'This field may not be null.',
  blank: 'This field may not be blank.',
  notString: 'Not a valid string.',
  tooLong: (max: number) => `Ensure this field has no more than ${max} characters.`,
  notInteger: 'A valid integer is required.',
  notNumber: 'A valid number is required.',
  notBoolean: 'Must be a valid boolean.',
  choice: (value: unknown, choices: readonly (string | number)[]) =>
    `"${String(value).slice(0, 64)}" is not a valid choice; choose one of ${choices.map((choice) => JSON.stringify(choice)).join(', ')}.`,
  notObject: 'Expected a JSON object.',
  notList: 'Expected a list of items.',
  doesNotExist: (id: unknown) => `Invalid pk "${String(id).slice(0, 32)}" - object does not exist.`,
};

type Check = (value: unknown) => string | undefined;

/**
 * One validator per field that yields at most one message. Missing is decided by the caller:
 * on create `required` fields report "This field is required."; on update (PartialType with
 * skipNullProperties: false) a missing field is skipped and an explicit null still reaches here.
 */
interface Presence {
  /** May be left out (on create; on update every field may). */
  optional?: boolean;
  /** May be null. */
  nullable?: boolean;
}

/**
 * What a call site adds to a field's documentation. The rules themselves (type, bounds, choices,
 * nullability, presence) are the decorator's own arguments: each decorator below applies them to
 * the validator and to the field's OpenAPI schema at once, and the MCP tools read that schema, so
 * a rule is stated in one place.
 */
export interface FieldDoc {
  description?: string;
  example?: unknown;
  /** What the service fills in when the field is left out on create; documented only for optional fields. */
  default?: unknown;
  /** The names of a numeric enum's members, for client generators. */
  'x-enum-varnames'?: string[];
}

/** The field's OpenAPI schema: the rules, then what the call site documents. */
function documented(rules: ApiPropertyOptions, { nullable = false, optional = false }: Presence, doc: FieldDoc): PropertyDecorator {
  const schema: Record<string, unknown> = {
    ...rules,
    nullable: nullable || undefined,
    required: !optional,
    default: optional ? doc.default : undefined,
    example: doc.example,
    description: doc.description,
    'x-enum-varnames': doc['x-enum-varnames'],
  };
  return ApiProperty(Object.fromEntries(Object.entries(schema).filter(([, value]) => value !== undefined)));
}

function field(name: string, check: Check, { nullable = false, optional = false }: Presence = {}) {
  const messageFor = (value: unknown): string | undefined => {
    if (value === undefined) return optional ? undefined : MESSAGES.required;
    if (value === null) return nullable ? undefined : MESSAGES.notNull;
    return check(value);
  };
  return ValidateBy({
    name,
    validator: {
      validate: (value: unknown) => messageFor(value) === undefined,
      defaultMessage: (args?: ValidationArguments) => messageFor(args?.value) ?? '',
    },
  });
}

/**
 * What a valid value looks like, for clients and their generators (`format: 'email'`, a JWT's
 * `pattern`): documented, not checked here. The endpoint decides what a value off it gets, as its
 * own documentation says (a token that is no JWT is a 401 `token_not_valid` like any other bad one).
 */
export interface ShapeHint {
  format?: string;
  pattern?: string;
}

/** A string of 1..max characters (trimmed first unless `trim: false`), with an optional shape hint (e.g. `format: 'password'`). */
export function RequiredString({ max, trim = true, format, pattern, ...doc }: { max: number; trim?: boolean } & ShapeHint & FieldDoc) {
  return applyDecorators(
    documented({ type: 'string', format, pattern, minLength: 1, maxLength: max }, {}, doc),
    Transform(({ value }) => (trim && typeof value === 'string' ? value.trim() : value)),
    field('string', stringCheck(1, max)),
  );
}

/** A string of 0..max characters; blank allowed. Left out on create, it is "". */
export function TextField({ max, optional = false, format, pattern, ...doc }: { max: number; optional?: boolean } & ShapeHint & FieldDoc) {
  return applyDecorators(
    documented({ type: 'string', format, pattern, maxLength: max }, { optional }, { default: '', ...doc }),
    field('text', stringCheck(0, max), { optional }),
  );
}

function stringCheck(min: number, max: number): Check {
  return (value) => {
    if (typeof value !== 'string') return MESSAGES.notString;
    if (value.length < min) return MESSAGES.blank;
    if (value.length > max) return MESSAGES.tooLong(max);
    return undefined;
  };
}

/** The schema of a value that is one of `choices`, in a body or a query string. */
export function choiceSchema(choices: readonly (string | number)[]): Record<string, unknown> {
  const type = choices.every((choice) => typeof choice === 'number') ? (choices.every(Number.isInteger) ? 'integer' : 'number') : 'string';
  // Numeric choices also state their range, for generators that read bounds rather than enums.
  return type === 'string'
    ? { type, enum: [...choices] }
    : { type, enum: [...choices], minimum: Math.min(...(choices as number[])), maximum: Math.max(...(choices as number[])) };
}

/** One of `choices`, compared strictly (so "1" is not 1). */
export function ChoiceField(choices: readonly (string | number)[], { optional, nullable, ...doc }: Presence & FieldDoc = {}) {
  return applyDecorators(
    documented(choiceSchema(choices), { optional, nullable }, doc),
    field('choice', (value) => (choices.includes(value as string | number) ? undefined : MESSAGES.choice(value, choices)), {
      optional,
      nullable,
    }),
  );
}

/** `true` or `false`, strictly: "true", 1 and null are refused (a flag a client means to set must be a JSON boolean). */
export function BooleanField({ optional, ...doc }: Pick<Presence, 'optional'> & FieldDoc = {}) {
  return applyDecorators(
    documented({ type: 'boolean' }, { optional }, doc),
    field('boolean', (value) => (typeof value === 'boolean' ? undefined : MESSAGES.notBoolean), { optional }),
  );
}

/** A reference to another object by integer id, or null (the default). Existence (in the caller's workspace) is the service's job. */
export function ReferenceField({ optional = true, ...doc }: { optional?: boolean } & FieldDoc = {}) {
  return applyDecorators(
    documented({ ...ID_SCHEMA }, { nullable: true, optional }, { default: null, ...doc }),
    field('reference', (value) => (isId(value) ? undefined : MESSAGES.notInteger), { nullable: true, optional }),
  );
}

/** A list of distinct integer ids; left out on create, it is []. */
export function ReferenceListField({ maxItems = 100, optional = true, ...doc }: { maxItems?: number; optional?: boolean } & FieldDoc = {}) {
  return applyDecorators(
    documented({ type: 'array', items: { ...ID_SCHEMA }, maxItems, uniqueItems: true }, { optional }, { default: [], ...doc }),
    field(
      'referenceList',
      (value) => {
        if (!Array.isArray(value)) return MESSAGES.notList;
        if (value.length > maxItems) return `Ensure this list has no more than ${maxItems} items.`;
        if (!value.every(isId)) return MESSAGES.notInteger;
        if (new Set(value).size !== value.length) return 'Duplicate ids are not allowed.';
        return undefined;
      },
      { optional },
    ),
  );
}

/** A number in [min, max], or null when nullable. Booleans and numeric strings are not numbers. */
export function NumberField(options: { min: number; max: number } & Presence & FieldDoc) {
  return rangeField('number', options);
}

/** An integer in [min, max]. Numeric strings and fractions are refused. */
export function IntegerField(options: { min: number; max: number } & Presence & FieldDoc) {
  return rangeField('integer', options);
}

function rangeField(
  type: 'number' | 'integer',
  { min, max, nullable = false, optional = false, ...doc }: { min: number; max: number } & Presence & FieldDoc,
) {
  const [isOfType, notOfType] = type === 'integer' ? [Number.isInteger, MESSAGES.notInteger] : [Number.isFinite, MESSAGES.notNumber];
  return applyDecorators(
    documented({ type, minimum: min, maximum: max }, { nullable, optional }, doc),
    field(
      type,
      (value) => {
        if (typeof value !== 'number' || !isOfType(value)) return notOfType;
        if (value < min || value > max) return `Ensure this value is between ${min} and ${max}.`;
        return undefined;
      },
      { nullable, optional },
    ),
  );
}

/** SPEC section 3: free-form JSON objects are at most 64 KiB serialised and 10 levels deep. */
export const JSON_OBJECT_MAX_BYTES = 64 * 1024;
export const JSON_OBJECT_MAX_DEPTH = 10;

/**
 * A JSON object (not an array), at most 64 KiB as JSON and nested at most 10 levels; left out on
 * create, it is {}. The limits are appended to the description, which has no keyword for them.
 */
export function JsonObjectField({
  maxBytes = JSON_OBJECT_MAX_BYTES,
  maxDepth = JSON_OBJECT_MAX_DEPTH,
  optional = true,
  grammar,
  description,
  ...doc
}: {
  maxBytes?: number;
  maxDepth?: number;
  optional?: boolean;
  /** The object's own rules, checked after the limits: every error under its path below the field (`rules.all.2.op`). */
  grammar?: (value: Record<string, unknown>) => Record<string, string[]>;
} & FieldDoc = {}) {
  const limits = `At most ${maxBytes / 1024} KiB as JSON, nested at most ${maxDepth} levels.`;
  const check: Check = (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return MESSAGES.notObject;
    const depth = depthOf(value, maxDepth + 1);
    if (depth > maxDepth) return `Nesting is deeper than ${maxDepth} levels.`;
    if (Buffer.byteLength(JSON.stringify(value), 'utf8') > maxBytes)
      return `Ensure this object is no larger than ${maxBytes / 1024} KiB as JSON.`;
    return undefined;
  };
  return applyDecorators(
    documented(
      { type: 'object', additionalProperties: true },
      { optional },
      { default: {}, ...doc, description: description ? `${description} ${limits}` : limits },
    ),
    grammar === undefined
      ? field('jsonObject', check, { optional })
      : nestedField(
          (value) => {
            const message = check(value);
            return message === undefined ? grammar(value as Record<string, unknown>) : { '': [message] };
          },
          { optional },
        ),
  );
}

/**
 * The constraint name of a check whose errors lie below its field: its message is the JSON of
 * those errors by sub-path, which the validation pipe files under `<field>.<path>`
 * (`flattenValidationErrors`); `''` is the field itself.
 */
export const NESTED_ERRORS = 'nestedErrors';

/** A field whose check reports errors below it, by sub-path (`scores.3.score`); see NESTED_ERRORS. */
export function nestedField(check: (value: unknown) => Record<string, string[]>, { optional = false }: Presence = {}) {
  const errorsFor = (value: unknown): Record<string, string[]> => {
    if (value === undefined) return optional ? {} : { '': [MESSAGES.required] };
    if (value === null) return { '': [MESSAGES.notNull] };
    return check(value);
  };
  return ValidateBy({
    name: NESTED_ERRORS,
    validator: {
      validate: (value: unknown) => Object.keys(errorsFor(value)).length === 0,
      defaultMessage: (args?: ValidationArguments) => JSON.stringify(errorsFor(args?.value)),
    },
  });
}

/** Accepted in a body and ignored (SPEC section 3: read-only fields in request bodies are ignored). */
export function ReadOnlyField() {
  return Allow();
}

/**
 * The largest id the API takes: ids are `bigint` in the database, read as JavaScript numbers, so
 * they stay exact up to 2^53 - 1 (docs/scale-out.md).
 */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/** An id as the API document states it (the wire format, int64, follows from the maximum: openapi.ts). */
export const ID_SCHEMA = { type: 'integer', minimum: 1, maximum: MAX_ID } as const;

/** A count of rows: 0 up to as many as ids can number. */
export const COUNT_SCHEMA = { type: 'integer', minimum: 0, maximum: MAX_ID } as const;

export function isId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_ID;
}

/** Levels of nesting of a JSON value, counting stops once `limit` is passed. */
function depthOf(value: unknown, limit: number, level = 0): number {
  if (typeof value !== 'object' || value === null) return level;
  if (level + 1 > limit) return level + 1;
  let deepest = level + 1;
  for (const child of Object.values(value)) {
    deepest = Math.max(deepest, depthOf(child, limit, level + 1));
    if (deepest > limit) break;
  }
  return deepest;
}

/**
 * A rule between two fields of one body, checked with the others so that a body's errors come back
 * all at once (issue 25: an empty name and a missing model instance used to report only the name):
 * the field is required while `other` is `expected`. A PATCH DTO made with PartialType skips it
 * when the field is absent, and the service checks the merged object.
 */
export function RequiredWhen(other: string, expected: unknown, message: string): PropertyDecorator {
  return ValidateBy({
    name: 'requiredWhen',
    validator: {
      validate: (value: unknown, args?: ValidationArguments) =>
        !((args?.object as Record<string, unknown> | undefined)?.[other] === expected && (value === undefined || value === null)),
      defaultMessage: () => message,
    },
  });
}

/** The field may be set only while `other` is `expected` (when the body names `other`). */
export function OnlyWhen(other: string, expected: unknown, message: string): PropertyDecorator {
  return ValidateBy({
    name: 'onlyWhen',
    validator: {
      validate: (value: unknown, args?: ValidationArguments) => {
        const stated = (args?.object as Record<string, unknown> | undefined)?.[other];
        return value === undefined || value === null || stated === undefined || stated === expected;
      },
      defaultMessage: () => message,
    },
  });
}
