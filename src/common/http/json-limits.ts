import { ApiError } from '../errors/api-error.js';

/**
 * How much structure one JSON body may carry (SPEC section 8), checked on its text before parsing and
 * before any transformation. The deepest legitimate body is a resource's JSON field (nesting ≤ 10)
 * inside the body; the most keys a legitimate body needs is a JSON field of a few hundred entries.
 * Beyond these limits a body costs the validation pipeline far more than its size suggests
 * (class-transformer's unknown-key step is quadratic in an object's key count).
 */
export const MAX_JSON_DEPTH = 32;
export const MAX_JSON_KEYS = 1000;

export const UNSTORABLE_MESSAGE = 'Must not contain NUL characters or unpaired UTF-16 surrogates.';

/** Node ≥ 20 has it (ES2024); the project's TypeScript lib is ES2023. */
type WellFormedString = string & { isWellFormed(): boolean };

/**
 * False for text PostgreSQL cannot store: a NUL (not allowed in text or jsonb) or an unpaired
 * UTF-16 surrogate (not encodable as UTF-8). Both checks are native scans: about 10 µs for a
 * megabyte, where one regular expression took 0.7 ms.
 */
export function isStorableText(text: string): boolean {
  return !text.includes('\0') && (text as WellFormedString).isWellFormed();
}

/** The characters that matter to depth and key count; runs of anything else are skipped by the regex engine. */
const STRUCTURE = /["\\[\]{}:]/g;
const [QUOTE, BACKSLASH, OPEN_ARRAY, CLOSE_ARRAY, OPEN_OBJECT, CLOSE_OBJECT, COLON] = [...'"\\[]{}:'].map((character) =>
  character.charCodeAt(0),
);

/**
 * Refuses JSON text nested deeper than MAX_JSON_DEPTH or with more than `maxKeys` keys (default
 * MAX_JSON_KEYS) before it is parsed: one pass that stops at the first limit reached, so a megabyte
 * of `[` or of tiny keys costs a few milliseconds instead of building half a million nested arrays
 * or a 94,000-key object. Whatever the total, no one object may have more than MAX_JSON_KEYS keys:
 * the quadratic cost is per object, so a route that takes many small objects (a batch of 1,000
 * people) may allow more keys in all. Brackets and colons inside strings do not count; malformed
 * text is left to the parser.
 */
export function checkJsonText(text: string, maxKeys = MAX_JSON_KEYS): void {
  let depth = 0;
  let keys = 0;
  // Keys of the object open at each depth (arrays count none).
  const objectKeys: number[] = [];
  let inString = false;
  const structure = new RegExp(STRUCTURE);
  // test() rather than exec(): the same scan without a match array per character found.
  while (structure.test(text)) {
    const character = text.charCodeAt(structure.lastIndex - 1);
    if (inString) {
      if (character === BACKSLASH) structure.lastIndex++;
      else if (character === QUOTE) inString = false;
    } else if (character === QUOTE) {
      inString = true;
    } else if (character === OPEN_OBJECT || character === OPEN_ARRAY) {
      if (++depth > MAX_JSON_DEPTH) throw tooDeep();
      objectKeys[depth] = 0;
    } else if (character === CLOSE_OBJECT || character === CLOSE_ARRAY) {
      depth--;
    } else if (character === COLON) {
      if (++keys > maxKeys) throw tooManyKeys(maxKeys);
      if (++objectKeys[depth]! > MAX_JSON_KEYS)
        throw new ApiError(400, 'parse_error', `An object in the JSON body has more than ${MAX_JSON_KEYS} keys.`);
    }
  }
}

/**
 * Walks a parsed body once, without recursion, and refuses a string or key that cannot be stored:
 * a 400 `validation_error` under the top-level field it sits in (never under a client-chosen
 * nested key, which could itself be bad). Depth and key count were bounded by `checkJsonText`
 * before parsing, so the walk is linear in a body that is already small enough.
 */
export function checkJsonStrings(body: unknown): void {
  const stack: { value: unknown; field: string | undefined }[] = [{ value: body, field: undefined }];
  while (stack.length > 0) {
    const { value, field } = stack.pop()!;
    if (typeof value === 'string') {
      if (!isStorableText(value)) throw unstorable(field ?? 'body');
    } else if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, field });
    } else if (typeof value === 'object' && value !== null) {
      for (const key in value) {
        if (!isStorableText(key)) throw unstorable(field ?? printable(key));
        stack.push({ value: (value as Record<string, unknown>)[key], field: field ?? key });
      }
    }
  }
}

/**
 * Refuses a query string with a parameter name or value that cannot be stored (e.g. `?search=%00`),
 * under the parameter's name.
 */
export function checkQuery(query: unknown): void {
  if (typeof query !== 'object' || query === null) return;
  for (const [name, raw] of Object.entries(query)) {
    if (!isStorableText(name)) throw unstorable(printable(name));
    for (const value of Array.isArray(raw) ? raw : [raw]) {
      if (typeof value === 'string' && !isStorableText(value)) throw unstorable(name);
    }
  }
}

function tooManyKeys(limit: number): ApiError {
  return new ApiError(400, 'parse_error', `The JSON body has more than ${limit} object keys.`);
}

function tooDeep(): ApiError {
  return new ApiError(400, 'parse_error', `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`);
}

function unstorable(field: string): ApiError {
  return ApiError.field(field, UNSTORABLE_MESSAGE);
}

/** A bad key named in an error with its bad characters replaced, so the error body itself is clean. */
function printable(key: string): string {
  return key.slice(0, 64).replace(/\0|\p{Surrogate}/gu, '\uFFFD');
}
