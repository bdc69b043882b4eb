import { ApiError } from '../errors/api-error.js';
import { MAX_ID, MESSAGES } from '../validation/fields.js';

/**
 * Readers for list filters (SPEC section 4): a value of the wrong type → 400 under the
 * parameter's name; an absent or empty parameter → no filter. Unknown parameters are ignored.
 */
export type Query = Record<string, unknown>;

function single(query: Query, name: string): string | undefined {
  const raw = query[name];
  const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function integerFilter(query: Query, name: string): number | undefined {
  const value = single(query, name);
  if (value === undefined) return undefined;
  if (!/^-?\d{1,16}$/.test(value) || Math.abs(Number(value)) > MAX_ID) throw ApiError.field(name, MESSAGES.notInteger);
  return Number(value);
}

export function choiceFilter<T extends string>(query: Query, name: string, choices: readonly T[]): T | undefined {
  const value = single(query, name);
  if (value === undefined) return undefined;
  if (!(choices as readonly string[]).includes(value)) throw ApiError.field(name, MESSAGES.choice(value, choices));
  return value as T;
}

/** `search`: a case-insensitive "contains" on the name, with LIKE wildcards escaped. */
export function searchPattern(query: Query): string | undefined {
  const value = single(query, 'search')?.trim();
  if (!value) return undefined;
  if (value.length > 255) throw ApiError.field('search', MESSAGES.tooLong(255));
  return `%${value.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}
