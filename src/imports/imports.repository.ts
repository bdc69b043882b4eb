import { Transform, type TransformCallback, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { from as copyFrom } from 'pg-copy-streams';
import type { PoolClient } from 'pg';
import type { Repository } from 'typeorm';
import { DEFAULT_ORDERING_COLUMNS, type OrderingColumns, type PageRequest } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type ListResult, TenantRepository } from '../common/tenancy/tenant-repository.js';
import { entityManagerOf, type Transaction } from '../common/tenancy/transactions.js';
import { IDENTIFIER_KIND_CODES } from '../people/person-identifiers.js';
import { MAX_TRAITS } from '../people/person-write.js';
import type { StagedRow } from './import-row-reader.js';
import { Import, type ImportRowError, type ImportStatus } from './import.entity.js';

const ORDERING_COLUMNS: OrderingColumns<Import> = {
  id: DEFAULT_ORDERING_COLUMNS.id,
  created_at: DEFAULT_ORDERING_COLUMNS.created_at,
  status: DEFAULT_ORDERING_COLUMNS.status,
};

/** Rows the merge took out of an import (duplicates, too many traits): how many, and the first lines. */
export interface DroppedRows {
  count: number;
  sample: number[];
}

/** An import's counts and samples, as the upload or the merge leaves them. */
export interface ImportOutcome {
  status: ImportStatus;
  rowsTotal: number;
  rowsAccepted: number;
  rowsRejected: number;
  rejectedByReason: Record<string, number>;
  errorsSample: ImportRowError[];
  startedAt?: 'now';
  finishedAt?: 'now';
}

/** The merge transaction's work_mem (tuneMerge). */
const MERGE_WORK_MEM = '128MB';

/** The longest piece of COPY text handed to the connection at once (see `stage`). */
const COPY_PIECE_CHARS = 32 * 1024;

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const NEEDS_ESCAPE = /[\\\n\r\t]/;

/** A value as COPY's text format writes it: NULL is `\N`, and backslash, tab and line breaks are escaped. */
function copyText(value: string | null): string {
  if (value === null) return '\\N';
  return NEEDS_ESCAPE.test(value) ? value.replace(/[\\\n\r\t]/g, (character) => COPY_ESCAPES[character]) : value;
}

/** A text[] literal; every element is quoted, so a trait called `NULL` stays a string. Elements are trait keys and kind names, which hold no quote or backslash. */
function copyArray(values: string[]): string {
  return values.length === 0 ? '{}' : `{${values.map((value) => `"${value}"`).join(',')}}`;
}

/** One staged row as a line of COPY text, in STAGED_COLUMNS order (exported for bench/imports.ts's plain-COPY limit). */
export function stagedRowCopyLine(customerId: number, importId: number, row: StagedRow): string {
  return (
    `${customerId}\t${importId}\t${row.line}\t${copyText(row.externalId)}\t${copyText(JSON.stringify(row.traits))}\t${copyArray(row.removedTraits)}\t` +
    `${copyText(row.consentAdUserData)}\t${copyText(row.consentAdPersonalization)}\t${copyText(row.countryCode)}\t` +
    `${copyText(row.postalCode)}\t${copyText(row.mobileAdId)}\t${copyArray(row.namedKinds)}\t` +
    `\\\\x${row.googleIdentifiers.toString('hex')}\t\\\\x${row.metaIdentifiers.toString('hex')}\t${copyArray(row.matchedKeys)}\n`
  );
}

export const STAGED_COLUMNS =
  'customer_id, import_id, line, external_id, traits, removed_traits, consent_ad_user_data, consent_ad_personalization, country_code, postal_code, mobile_ad_id, named_kinds, google_identifiers, meta_identifiers, matched_keys';

const MERGED_COUNTRY = `(CASE WHEN 'country' = ANY(s.named_kinds) THEN s.country_code ELSE p.country_code END)`;
const MERGED_POSTAL = `(CASE WHEN 'zip' = ANY(s.named_kinds) THEN s.postal_code ELSE p.postal_code END)`;
const MERGED_MOBILE_AD_ID = `(CASE WHEN 'mobile_ad_id' = ANY(s.named_kinds) THEN s.mobile_ad_id ELSE p.mobile_ad_id END)`;
/**
 * JavaScript's `\s` (which `postalCodeForms` removes with the dashes) as a bracket expression: the
 * database's `\s` follows its locale, and a code that differs by one space would hash differently.
 */
const POSTAL_SEPARATORS = String.raw`[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff-]`;
/**
 * The packed Meta zip hash of the merged postal code read in the merged country: `postalCodeForms`
 * (people/normalization) as SQL, lowercase without spaces or dashes and a US code cut to its first
 * 5 digits (elsewhere `^(.*)$` keeps the whole form), hashed (SPEC 10.1). NULL without a postal code.
 */
const ZIP_KIND_BYTE = `'\\x${IDENTIFIER_KIND_CODES.zip.toString(16).padStart(2, '0')}'::bytea`;
// A code that is nothing but separators has no Meta form (postalCodeForms): no hash, as in Node.
const MERGED_META_ZIP = `${ZIP_KIND_BYTE} || sha256(convert_to(NULLIF(regexp_replace(lower(regexp_replace(${MERGED_POSTAL}, '${POSTAL_SEPARATORS}', '', 'g')),
    CASE WHEN ${MERGED_COUNTRY} = 'US' THEN '^([0-9]{5}).+$' ELSE '^(.*)$' END, '\\1'), ''), 'UTF8'))`;
/**
 * A stored person's Meta hashes after the row. The row's zip hash was read in the row's country
 * alone; when the row names the country or the postal code but not both, the other is the stored
 * one, so the zip hash is that of the merged pair, as person-write.ts `normalizeWith` reads it for a
 * batch (a stored ZIP+4 given the country US, or a ZIP+4 given to a person stored in the US, is cut
 * to 5 digits). Only for stored people: a new person's staged hashes are already right.
 */
const MERGED_META_IDENTIFIERS = `CASE WHEN ('country' = ANY(s.named_kinds)) <> ('zip' = ANY(s.named_kinds))
      THEN merged_person_identifiers(merged_person_identifiers(p.meta_identifiers, s.named_kinds, s.meta_identifiers), '{zip}', COALESCE(${MERGED_META_ZIP}, ''))
      ELSE merged_person_identifiers(p.meta_identifiers, s.named_kinds, s.meta_identifiers) END`;
/**
 * A stored person's keys after the row, `matchedKeysOf` (people/normalization) as SQL: the merged
 * Google hashes hold the row's kinds where it names them and the stored ones elsewhere, as
 * person-write.ts `mergedColumns` reads them; an address is all four parts.
 */
const MERGED_MATCHED_KEYS = `array_remove(ARRAY[
    CASE WHEN 'email' = ANY(m.kinds) THEN 'email' END,
    CASE WHEN 'phone' = ANY(m.kinds) THEN 'phone' END,
    CASE WHEN 'first_name' = ANY(m.kinds) AND 'last_name' = ANY(m.kinds) AND ${MERGED_COUNTRY} IS NOT NULL AND ${MERGED_POSTAL} IS NOT NULL THEN 'address' END,
    CASE WHEN ${MERGED_MOBILE_AD_ID} IS NOT NULL THEN 'mobile_ad_id' END
  ], NULL)`;

/**
 * All SQL about imports and their staged rows. Staging is one COPY per upload; the merge is a
 * fixed number of set-based statements whatever the file's size, each taking the staged rows in
 * key order (DATAPLANE-FACTS: random B-tree inserts dominate a merge unless the rows are sorted).
 */
@Injectable()
export class ImportsRepository extends TenantRepository<Import> {
  constructor(@InjectRepository(Import) imports: Repository<Import>, tenants: TenantContext) {
    super(imports, tenants, 'import');
  }

  list(request: PageRequest): Promise<ListResult<Import>> {
    return this.listPage([], request, { columns: ORDERING_COLUMNS });
  }

  /**
   * Streams batches of staged rows into `import_rows` with one COPY on the transaction's
   * connection, so a broken upload rolls back with the transaction and leaves no row. The
   * customer id is written by this method from the tenant context, never taken from the rows.
   * `pipeline` carries the COPY stream's backpressure back to the request socket.
   */
  async stage(importId: number, batches: Readable, transaction: Transaction): Promise<void> {
    const runner = entityManagerOf(transaction).queryRunner;
    if (runner === undefined) throw new Error('stage() needs a transaction');
    const client = (await runner.connect()) as PoolClient;
    const customerId = this.tenant.customerId;
    const encode = new Transform({
      writableObjectMode: true,
      // One batch waiting at most (see readRows in import-stream.ts).
      writableHighWaterMark: 1,
      transform(rows: StagedRow[], _encoding, callback: TransformCallback) {
        // Pieces of at most ~32 KB: a longer string or buffer is allocated outside V8's young
        // generation, where only a full collection frees it, and the heap grew by 200 MB an import.
        let text = '';
        for (const row of rows) {
          text += stagedRowCopyLine(customerId, importId, row);
          if (text.length >= COPY_PIECE_CHARS) {
            this.push(text);
            text = '';
          }
        }
        callback(null, text === '' ? undefined : text);
      },
    });
    await pipeline(batches, encode, client.query(copyFrom(`COPY import_rows (${STAGED_COLUMNS}) FROM STDIN`)));
  }

  /** The import, locked for the rest of the transaction: the merge's guard against a second run. */
  async lockedStatus(importId: number, transaction: Transaction): Promise<Import | undefined> {
    return (await this.findById(importId, { transaction, lock: true })) ?? undefined;
  }

  async setOutcome(importId: number, outcome: ImportOutcome, transaction?: Transaction): Promise<void> {
    await this.tenantQuery(
      `UPDATE imports SET status = $3, rows_total = $4, rows_accepted = $5, rows_rejected = $6, rejected_by_reason = $7::jsonb,
         errors_sample = $8::jsonb, started_at = CASE WHEN $9 THEN now() ELSE started_at END,
         finished_at = CASE WHEN $10 THEN now() ELSE finished_at END, updated_at = now()
       WHERE customer_id = $1 AND id = $2`,
      [
        importId,
        outcome.status,
        outcome.rowsTotal,
        outcome.rowsAccepted,
        outcome.rowsRejected,
        JSON.stringify(outcome.rejectedByReason),
        JSON.stringify(outcome.errorsSample),
        outcome.startedAt === 'now',
        outcome.finishedAt === 'now',
      ],
      transaction,
    );
  }

  async markProcessing(importId: number): Promise<boolean> {
    const { affected } = await this.tenantQuery(
      `UPDATE imports SET status = 'processing', started_at = COALESCE(started_at, now()), updated_at = now()
       WHERE customer_id = $1 AND id = $2 AND status IN ('queued', 'processing')`,
      [importId],
    );
    return affected > 0;
  }

  /** Staged rows whose external_id an earlier line of the file already has: the later ones go (as a batch rejects them). */
  async dropDuplicates(importId: number, transaction: Transaction): Promise<DroppedRows> {
    const { rows } = await this.tenantQuery<DroppedRows>(
      `WITH later AS (
         SELECT d.line FROM (
           SELECT s.line, row_number() OVER (PARTITION BY s.external_id ORDER BY s.line) AS n
           FROM import_rows s WHERE s.customer_id = $1 AND s.import_id = $2) d
         WHERE d.n > 1),
       gone AS (
         DELETE FROM import_rows r USING later WHERE r.customer_id = $1 AND r.import_id = $2 AND r.line = later.line RETURNING r.line)
       SELECT count(*)::int AS count, COALESCE((array_agg(gone.line ORDER BY gone.line))[1:100], '{}') AS sample FROM gone`,
      [importId],
      transaction,
    );
    return { count: rows[0].count, sample: rows[0].sample.map(Number) };
  }

  /**
   * Locks the stored people the import names, in external_id order (as the batch upsert locks
   * them), so the merged traits and consent read from them are what gets written.
   */
  async lockNamedPeople(importId: number, transaction: Transaction): Promise<void> {
    await this.tenantQuery(
      `SELECT count(*) FROM (
         SELECT p.id FROM people p JOIN import_rows s ON s.customer_id = p.customer_id AND s.external_id = p.external_id
         WHERE p.customer_id = $1 AND s.import_id = $2 ORDER BY p.external_id FOR UPDATE OF p) locked`,
      [importId],
      transaction,
    );
  }

  /** Staged rows that would leave a stored person with more than 100 traits (SPEC 10.1): rejected as a batch row would be. */
  async dropTooManyTraits(importId: number, transaction: Transaction): Promise<DroppedRows> {
    const { rows } = await this.tenantQuery<DroppedRows>(
      `WITH gone AS (
         DELETE FROM import_rows r USING people p
         WHERE r.customer_id = $1 AND r.import_id = $2 AND p.customer_id = $1 AND p.external_id = r.external_id
           AND (SELECT count(*) FROM jsonb_object_keys((p.traits || r.traits) - r.removed_traits)) > $3
         RETURNING r.line)
       SELECT count(*)::int AS count, COALESCE((array_agg(gone.line ORDER BY gone.line))[1:100], '{}') AS sample FROM gone`,
      [importId, MAX_TRAITS],
      transaction,
    );
    return { count: rows[0].count, sample: rows[0].sample.map(Number) };
  }

  /**
   * Session settings for the merge transaction only (SET LOCAL ends with it). The merge sorts the
   * staged rows by external_id (duplicates, the upsert); at PostgreSQL's default 4 MB those sorts
   * went to disk (24 MB for 200k rows). 128 MB keeps a 1M-row import's sorts in memory; a merge
   * runs per worker, so a process holds at most WORKER_CONCURRENCY of them.
   *
   * The staged rows were written a moment ago, usually before autovacuum has looked at the table,
   * so the planner takes `import_rows` for nearly empty: the duplicate check then joined 20,000
   * staged rows with themselves in a nested loop, 125 s on PostgreSQL 15. Every statement of the
   * merge works on whole sets, so it is planned without nested loops (hash and merge joins): the
   * same 20,000-row import then took 1.8 s end to end. (ANALYZE would also do, but it holds a lock
   * on the table to the end of the transaction, which would queue concurrent merges behind it.)
   */
  async tuneMerge(transaction: Transaction): Promise<void> {
    const manager = entityManagerOf(transaction);
    await manager.query(`SET LOCAL work_mem = '${MERGE_WORK_MEM}'`);
    await manager.query('SET LOCAL enable_nestloop = off');
  }

  /**
   * One upsert of every staged person, merged with the stored row as a batch write merges
   * (person-write.ts `mergedColumns`): traits merged and removed keys dropped, consent per key,
   * the named clear columns replaced, the named kinds' hashes replaced (`merged_person_identifiers`,
   * migration 1764400000000), the Meta zip hash read in the merged country, matched keys from the
   * merged hashes. A new person (no stored row) takes the staged values as they are, and the
   * functions run only for stored people.
   *
   * Rows are written in external_id order (the unique index's order, and the order the batch
   * upsert locks in); a new person's id is drawn in line order, before that sort.
   */
  async upsertPeople(importId: number, transaction: Transaction): Promise<void> {
    await this.tenantQuery(
      `INSERT INTO people (customer_id, id, external_id, traits, consent_ad_user_data, consent_ad_personalization, country_code, postal_code, mobile_ad_id,
         matched_keys, google_identifiers, meta_identifiers)
       SELECT $1, s.new_id, s.external_id, (COALESCE(p.traits, '{}') || s.traits) - s.removed_traits,
         COALESCE(s.consent_ad_user_data, p.consent_ad_user_data, 'unspecified'),
         COALESCE(s.consent_ad_personalization, p.consent_ad_personalization, 'unspecified'),
         ${MERGED_COUNTRY}, ${MERGED_POSTAL}, ${MERGED_MOBILE_AD_ID},
         CASE WHEN p.id IS NULL THEN s.matched_keys ELSE ${MERGED_MATCHED_KEYS} END,
         CASE WHEN p.id IS NULL THEN s.google_identifiers ELSE m.google END,
         CASE WHEN p.id IS NULL THEN s.meta_identifiers ELSE ${MERGED_META_IDENTIFIERS} END
       FROM (SELECT nextval('people_id_seq') AS new_id, r.* FROM import_rows r WHERE r.customer_id = $1 AND r.import_id = $2 ORDER BY r.line) s
       LEFT JOIN people p ON p.customer_id = s.customer_id AND p.external_id = s.external_id
       -- A stored person's merged Google hashes and their kinds, once a row (OFFSET 0 keeps the
       -- planner from copying the expressions into each place they are used). Both functions are
       -- STRICT: for a new person (p's columns NULL) they are not called.
       CROSS JOIN LATERAL (
         SELECT g.google, person_identifier_kinds(g.google) AS kinds
         FROM (SELECT merged_person_identifiers(p.google_identifiers, s.named_kinds, s.google_identifiers) AS google OFFSET 0) g
         OFFSET 0) m
       ORDER BY s.external_id
       ON CONFLICT (customer_id, external_id) DO UPDATE SET
         traits = EXCLUDED.traits,
         consent_ad_user_data = EXCLUDED.consent_ad_user_data,
         consent_ad_personalization = EXCLUDED.consent_ad_personalization,
         country_code = EXCLUDED.country_code,
         postal_code = EXCLUDED.postal_code,
         mobile_ad_id = EXCLUDED.mobile_ad_id,
         matched_keys = EXCLUDED.matched_keys,
         google_identifiers = EXCLUDED.google_identifiers,
         meta_identifiers = EXCLUDED.meta_identifiers,
         updated_at = now()`,
      [importId],
      transaction,
    );
  }

  async deleteStaged(importId: number, transaction?: Transaction): Promise<void> {
    await this.tenantQuery('DELETE FROM import_rows WHERE customer_id = $1 AND import_id = $2', [importId], transaction);
  }
}
