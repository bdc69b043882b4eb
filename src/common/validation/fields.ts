import { applyDecorators } from '@nestjs/common';
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

/** A string of 1..max characters (trimmed first unless `trim: false`). */
export function RequiredString({ max, trim = true }: { max: number; trim?: boolean }) {
  return applyDecorators(
    Transform(({ value }) => (trim && typeof value === 'string' ? value.trim() : value)),
    field('string', stringCheck(1, max)),
  );
}

/** A string of 0..max characters; blank allowed. */
export function TextField({ max, optional = false }: { max: number; optional?: boolean }) {
  return field('text', stringCheck(0, max), { optional });
}

function stringCheck(min: number, max: number): Check {
  return (value) => {
    if (typeof value !== 'string') return MESSAGES.notString;
    if (value.length < min) return MESSAGES.blank;
    if (value.length > max) return MESSAGES.tooLong(max);
    return undefined;
  };
}

/** One of `choices`, compared strictly (so "1" is not 1). */
export function ChoiceField(choices: readonly (string | number)[], options: Presence = {}) {
  return field('choice', (value) => (choices.includes(value as string | number) ? undefined : MESSAGES.choice(value, choices)), options);
}

/** A reference to another object by integer id, or null. Existence (in the caller's workspace) is the service's job. */
export function ReferenceField({ optional = true }: { optional?: boolean } = {}) {
  return field('reference', (value) => (isId(value) ? undefined : MESSAGES.notInteger), { nullable: true, optional });
}

/** A list of distinct integer ids. */
export function ReferenceListField({ maxItems = 100, optional = true }: { maxItems?: number; optional?: boolean } = {}) {
  return field(
    'referenceList',
    (value) => {
      if (!Array.isArray(value)) return MESSAGES.notList;
      if (value.length > maxItems) return `Ensure this list has no more than ${maxItems} items.`;
      if (!value.every(isId)) return MESSAGES.notInteger;
      if (new Set(value).size !== value.length) return 'Duplicate ids are not allowed.';
      return undefined;
    },
    { optional },
  );
}

/** A number in [min, max], or null when nullable. Booleans and numeric strings are not numbers. */
export function NumberField({ min, max, nullable = false, optional = false }: { min: number; max: number } & Presence) {
  return field(
    'number',
    (value) => {
      if (typeof value !== 'number' || !Number.isFinite(value)) return MESSAGES.notNumber;
      if (value < min || value > max) return `Ensure this value is between ${min} and ${max}.`;
      return undefined;
    },
    { nullable, optional },
  );
}

/** SPEC section 3: free-form JSON objects are at most 64 KiB serialised and 10 levels deep. */
export const JSON_OBJECT_MAX_BYTES = 64 * 1024;
export const JSON_OBJECT_MAX_DEPTH = 10;

/** A JSON object (not an array), at most 64 KiB as JSON and nested at most 10 levels. */
export function JsonObjectField({ maxBytes = JSON_OBJECT_MAX_BYTES, maxDepth = JSON_OBJECT_MAX_DEPTH, optional = true } = {}) {
  return field(
    'jsonObject',
    (value) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return MESSAGES.notObject;
      const depth = depthOf(value, maxDepth + 1);
      if (depth > maxDepth) return `Nesting is deeper than ${maxDepth} levels.`;
      if (Buffer.byteLength(JSON.stringify(value), 'utf8') > maxBytes)
        return `Ensure this object is no larger than ${maxBytes / 1024} KiB as JSON.`;
      return undefined;
    },
    { optional },
  );
}

/** Accepted in a body and ignored (SPEC section 3: read-only fields in request bodies are ignored). */
export function ReadOnlyField() {
  return Allow();
}

function isId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 2_147_483_647;
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

/** An integer in [min, max]. Numeric strings and fractions are refused. */
export function IntegerField({ min, max, nullable = false, optional = false }: { min: number; max: number } & Presence) {
  return field(
    'integer',
    (value) => {
      if (typeof value !== 'number' || !Number.isInteger(value)) return MESSAGES.notInteger;
      if (value < min || value > max) return `Ensure this value is between ${min} and ${max}.`;
      return undefined;
    },
    { nullable, optional },
  );
}
