import { checkJsonStrings } from '../common/http/json-limits.js';
import { identifierColumns, readPersonWrite } from '../people/person-write.js';

/**
 * Reads one import row into what may be staged (SPEC 10.1, Imports). Every rule is the people
 * module's: a CSV record is turned into the person object a batch row would be and read by
 * `readPersonWrite`, so normalisation, hashing, trait and consent checks and the derived
 * external_id are exactly those of `POST /api/v1/people/batch/`. What comes out holds no raw
 * email, phone or name: hashes, the clear columns the SPEC allows, traits and consent.
 *
 * Unlike a batch row, an import row is read without the stored person (the merge is set-based,
 * in SQL): a phone without `+` is read in the row's own `country_code`, else as E.164 without its
 * plus, never in a country stored earlier. The Meta zip hash, whose form depends on the country,
 * is worked out again in the merge when the row names only one of country and postal code.
 */

export interface StagedRow {
  line: number;
  externalId: string;
  /** Set keys; removed keys (an NDJSON `null`) are in `removedTraits`. */
  traits: Record<string, string | number | boolean>;
  removedTraits: string[];
  consentAdUserData: string | null;
  consentAdPersonalization: string | null;
  countryCode: string | null;
  postalCode: string | null;
  mobileAdId: string | null;
  /**
   * The identifier kinds the row names (their stored hashes are replaced), and `mobile_ad_id` when
   * it names one: the mobile ad id has no hash, but a named `null` still removes the stored one.
   */
  namedKinds: string[];
  /** The hashes of the kinds the row names, packed per platform (person-identifiers.ts). */
  googleIdentifiers: Buffer;
  metaIdentifiers: Buffer;
  /** The row's keys as a new person's; the merge works out a stored person's from both. */
  matchedKeys: string[];
}

export interface RejectedRow {
  line: number;
  errors: Record<string, string[]>;
}

/** Why a whole file is refused: a code for `errors_sample` under `file`. */
export class ImportFileError extends Error {
  constructor(
    readonly code: string,
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

const IDENTIFIER_COLUMNS = new Set([
  'email',
  'phone',
  'first_name',
  'last_name',
  'country_code',
  'postal_code',
  'mobile_ad_id',
  'email_sha256',
  'phone_sha256',
]);
const CONSENT_COLUMNS = { consent_ad_user_data: 'ad_user_data', consent_ad_personalization: 'ad_personalization' } as const;
/** A column that can give a row its external_id, given or derived (SPEC 10.1): without one every row would be rejected. */
const KEY_COLUMNS = new Set(['external_id', 'email', 'phone', 'email_sha256', 'phone_sha256']);
/** external_id, 9 identifiers, 2 consents and 100 traits fit with room to spare. */
export const MAX_COLUMNS = 1000;

type TraitType = 'string' | 'number' | 'boolean';

interface Column {
  index: number;
  name: string;
  kind: 'external_id' | 'identifier' | 'consent' | 'trait';
  traitType?: TraitType;
}

/** What a CSV header row says each column is. */
export interface CsvLayout {
  columns: Column[];
  width: number;
}

/** The header row (line 1): refused when nothing in it can key a row, or a name repeats. */
export function readCsvHeader(header: string[]): CsvLayout {
  if (header.length > MAX_COLUMNS)
    throw new ImportFileError('too_many_columns', 1, `The header has ${header.length} columns; at most ${MAX_COLUMNS} are read.`);
  const seen = new Set<string>();
  const columns: Column[] = [];
  header.forEach((raw, index) => {
    const text = raw.trim();
    const [name, type] = splitType(text);
    if (name === '') return;
    if (seen.has(name)) throw new ImportFileError('duplicate_column', 1, `The header names the column "${name}" twice.`);
    seen.add(name);
    if (name === 'external_id') columns.push({ index, name, kind: 'external_id' });
    else if (IDENTIFIER_COLUMNS.has(name)) columns.push({ index, name, kind: 'identifier' });
    else if (Object.hasOwn(CONSENT_COLUMNS, name)) columns.push({ index, name, kind: 'consent' });
    else columns.push({ index, name, kind: 'trait', traitType: type });
  });
  if (!columns.some((column) => KEY_COLUMNS.has(column.name)))
    throw new ImportFileError(
      'no_usable_column',
      1,
      'The header has no external_id, email, phone, email_sha256 or phone_sha256 column, so no row could be keyed.',
    );
  return { columns, width: header.length };
}

function splitType(text: string): [string, TraitType] {
  for (const type of ['number', 'boolean'] as const) if (text.endsWith(`:${type}`)) return [text.slice(0, -type.length - 1), type];
  return [text, 'string'];
}

/** A CSV record as the person object of a batch row; an empty cell names nothing. */
export function csvRecordToPerson(
  layout: CsvLayout,
  record: string[],
): { person?: Record<string, unknown>; errors?: Record<string, string[]> } {
  if (record.length !== layout.width) return { errors: { non_field_errors: ['wrong_column_count'] } };
  const person: Record<string, unknown> = {};
  const identifiers: Record<string, unknown> = {};
  // Without a prototype, a column named `__proto__` is a key like any other, which the people's
  // rules then refuse (invalid_trait_key), not a silent assignment of the object's prototype.
  const traits: Record<string, unknown> = Object.create(null);
  const consent: Record<string, unknown> = {};
  const errors: Record<string, string[]> = {};
  for (const column of layout.columns) {
    const cell = record[column.index];
    if (cell === undefined || cell === '') continue;
    switch (column.kind) {
      case 'external_id':
        person.external_id = cell;
        break;
      case 'identifier':
        identifiers[column.name] = cell;
        break;
      case 'consent':
        consent[CONSENT_COLUMNS[column.name as keyof typeof CONSENT_COLUMNS]] = cell.trim();
        break;
      case 'trait': {
        const value = traitValue(cell, column.traitType!);
        if (value === undefined) (errors[`traits.${column.name}`] ??= []).push('invalid_trait_value');
        else traits[column.name] = value;
      }
    }
  }
  if (Object.keys(errors).length > 0) return { errors };
  if (Object.keys(identifiers).length > 0) person.identifiers = identifiers;
  if (Object.keys(traits).length > 0) person.traits = traits;
  if (Object.keys(consent).length > 0) person.consent = consent;
  return { person };
}

function traitValue(cell: string, type: TraitType): string | number | boolean | undefined {
  if (type === 'string') return cell;
  const text = cell.trim();
  if (type === 'boolean') return text === 'true' ? true : text === 'false' ? false : undefined;
  const number = text === '' ? NaN : Number(text);
  return Number.isFinite(number) ? number : undefined;
}

/** One NDJSON line as a person object; its strings are checked as a JSON body's are (no NUL, no lone surrogate). */
export function ndjsonLineToPerson(value: unknown): { person?: unknown; errors?: Record<string, string[]> } {
  try {
    checkJsonStrings(value);
  } catch {
    return { errors: { non_field_errors: ['invalid_string'] } };
  }
  return { person: value };
}

/** A person object read by the people module's rules: a row to stage, or its errors. */
export function readImportRow(line: number, person: unknown): StagedRow | RejectedRow {
  const write = readPersonWrite(person);
  if (Object.keys(write.errors).length > 0 || write.externalId === undefined) return { line, errors: write.errors };
  const traits: Record<string, string | number | boolean> = {};
  const removedTraits: string[] = [];
  for (const [key, value] of Object.entries(write.traits ?? {})) {
    if (value === null) removedTraits.push(key);
    else traits[key] = value;
  }
  const normalized = write.normalized;
  const clear = {
    countryCode: write.namesCountryCode ? (normalized?.countryCode ?? null) : null,
    postalCode: write.namesPostalCode ? (normalized?.postalCode ?? null) : null,
    mobileAdId: write.namesMobileAdId ? (normalized?.mobileAdId ?? null) : null,
  };
  // As a new person's: the hashes packed, and the keys; the merge works out a stored person's in SQL.
  const columns = identifierColumns(write, undefined, clear);
  return {
    line,
    externalId: write.externalId,
    traits,
    removedTraits,
    consentAdUserData: write.consent.adUserData ?? null,
    consentAdPersonalization: write.consent.adPersonalization ?? null,
    ...clear,
    namedKinds: write.namesMobileAdId ? [...write.namedKinds, 'mobile_ad_id'] : [...write.namedKinds],
    googleIdentifiers: columns.googleIdentifiers,
    metaIdentifiers: columns.metaIdentifiers,
    matchedKeys: columns.matchedKeys,
  };
}

export function isRejected(row: StagedRow | RejectedRow): row is RejectedRow {
  return 'errors' in row;
}
