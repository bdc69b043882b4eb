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
import { MAX_TRAITS } from '../people/person-write.js';
import type { StagedRow } from './import-row-reader.js';
import { Import, type ImportRowError, type ImportStatus } from './import.entity.js';

const ORDERING_COLUMNS: OrderingColumns<Import> = {
  id: DEFAULT_ORDERING_COLUMNS.id,
  created_at: DEFAULT_ORDERING_COLUMNS.created_at,
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
    `${copyText(row.postalCode)}\t${copyText(row.mobileAdId)}\t${copyArray(row.namedKinds)}\t${copyArray(row.hashTags)}\t` +
    `\\\\x${row.hashes.toString('hex')}\n`
  );
}

export const STAGED_COLUMNS =
  'customer_id, import_id, line, external_id, traits, removed_traits, consent_ad_user_data, consent_ad_personalization, country_code, postal_code, mobile_ad_id, named_kinds, hash_tags, hashes';

/**
 * A staged row's stored Google kind, or the row's own when it names that kind (SPEC 10.1: a write
 * replaces the identifiers it names). The same reading as `mergedColumns` in person-write.ts.
 */
const has = (kind: string) =>
  `(CASE WHEN '${kind}' = ANY(s.named_kinds) THEN 'google:${kind}' = ANY(s.hash_tags) ELSE COALESCE('${kind}' = ANY(stored.kinds), false) END)`;
const MERGED_COUNTRY = `(CASE WHEN 'country' = ANY(s.named_kinds) THEN s.country_code ELSE p.country_code END)`;
const MERGED_POSTAL = `(CASE WHEN 'zip' = ANY(s.named_kinds) THEN s.postal_code ELSE p.postal_code END)`;
const MERGED_MOBILE_AD_ID = 'COALESCE(s.mobile_ad_id, p.mobile_ad_id)';
/** `matchedKeysOf` (people/normalization) as SQL, for the set-based merge: an address is all four parts. */
const MERGED_MATCHED_KEYS = `array_remove(ARRAY[
    CASE WHEN ${has('email')} THEN 'email' END,
    CASE WHEN ${has('phone')} THEN 'phone' END,
    CASE WHEN ${has('first_name')} AND ${has('last_name')} AND ${MERGED_COUNTRY} IS NOT NULL AND ${MERGED_POSTAL} IS NOT NULL THEN 'address' END,
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
   * the named clear columns replaced, matched keys from the named and the stored Google kinds.
   *
   * Rows are written in external_id order (the unique index's order, and the order the batch
   * upsert locks in), but a new person's id is drawn in line order, before that sort: the hashes
   * are then inserted in line order with ascending person ids, which append at the right edge of
   * `person_identifiers`' key without sorting 10 rows per person (an update keeps its stored id).
   * Answers how many of the rows updated a stored person: none means no stored hash can be named.
   */
  async upsertPeople(importId: number, transaction: Transaction): Promise<{ updated: number }> {
    const { rows } = await this.tenantQuery<{ updated: number }>(
      `WITH upserted AS (
       INSERT INTO people (customer_id, id, external_id, traits, consent_ad_user_data, consent_ad_personalization, country_code, postal_code, mobile_ad_id, matched_keys)
       SELECT $1, s.new_id, s.external_id, (COALESCE(p.traits, '{}') || s.traits) - s.removed_traits,
         COALESCE(s.consent_ad_user_data, p.consent_ad_user_data, 'unspecified'),
         COALESCE(s.consent_ad_personalization, p.consent_ad_personalization, 'unspecified'),
         ${MERGED_COUNTRY}, ${MERGED_POSTAL}, ${MERGED_MOBILE_AD_ID}, ${MERGED_MATCHED_KEYS}
       FROM (SELECT nextval('people_id_seq') AS new_id, r.* FROM import_rows r WHERE r.customer_id = $1 AND r.import_id = $2 ORDER BY r.line) s
       LEFT JOIN people p ON p.customer_id = s.customer_id AND p.external_id = s.external_id
       -- Naming s (not only p) keeps the lookup after the join: only the people the file names are read,
       -- never every person of the workspace; a new person (p.id NULL) skips it.
       LEFT JOIN LATERAL (
         SELECT array_agg(DISTINCT i.kind) AS kinds FROM person_identifiers i
         WHERE p.id IS NOT NULL AND i.customer_id = s.customer_id AND i.person_id = p.id AND i.platform = 'google') stored ON true
       ORDER BY s.external_id
       ON CONFLICT (customer_id, external_id) DO UPDATE SET
         traits = EXCLUDED.traits,
         consent_ad_user_data = EXCLUDED.consent_ad_user_data,
         consent_ad_personalization = EXCLUDED.consent_ad_personalization,
         country_code = EXCLUDED.country_code,
         postal_code = EXCLUDED.postal_code,
         mobile_ad_id = EXCLUDED.mobile_ad_id,
         matched_keys = EXCLUDED.matched_keys,
         updated_at = now()
       -- xmax is 0 on a row this statement inserted, and set on one it updated (locked, then rewrote).
       RETURNING xmax::text <> '0' AS updated)
       SELECT count(*) FILTER (WHERE updated)::int AS updated FROM upserted`,
      [importId],
      transaction,
    );
    return rows[0];
  }

  /**
   * SPEC 10.1: a write replaces the identifiers it names. One DELETE of the named kinds, run only
   * when the upsert updated a stored person (after the upsert, so a person another writer created
   * meanwhile is included), then one INSERT of the hashes in line order: a new person's id follows
   * its line (`upsertPeople`), so the rows arrive in key order without a sort.
   * `person_identifiers` has no foreign key (migration 1764000000000): every person_id here is a
   * person this transaction has just upserted, and so holds locked until it commits.
   * No ON CONFLICT: nothing can conflict (a row's hashes are unique per platform and kind, the
   * normalisation's `pushUnique`; duplicate external ids are gone; the named kinds' stored hashes
   * were just deleted, and the row has hashes of named kinds only), and the speculative insertion
   * ON CONFLICT makes took twice as long (2M hashes: 26.0 s and 15.6 s against 11.2 s and 7.1 s).
   */
  async replaceIdentifiers(importId: number, storedPeopleNamed: boolean, transaction: Transaction): Promise<void> {
    if (storedPeopleNamed)
      await this.tenantQuery(
        `DELETE FROM person_identifiers i USING import_rows s, people p
         WHERE i.customer_id = $1 AND s.customer_id = $1 AND s.import_id = $2 AND p.customer_id = $1 AND p.external_id = s.external_id
           AND i.person_id = p.id AND i.kind = ANY(s.named_kinds)`,
        [importId],
        transaction,
      );
    await this.tenantQuery(
      `INSERT INTO person_identifiers (customer_id, person_id, platform, kind, hash)
       SELECT $1, x.id, split_part(t.tag, ':', 1), split_part(t.tag, ':', 2), substring(x.hashes FROM (t.n::int - 1) * 32 + 1 FOR 32)
       FROM (
         SELECT p.id, s.hash_tags, s.hashes FROM import_rows s
         JOIN people p ON p.customer_id = s.customer_id AND p.external_id = s.external_id
         WHERE s.customer_id = $1 AND s.import_id = $2
         ORDER BY s.line) x
       CROSS JOIN LATERAL unnest(x.hash_tags) WITH ORDINALITY AS t(tag, n)`,
      [importId],
      transaction,
    );
  }

  async deleteStaged(importId: number, transaction?: Transaction): Promise<void> {
    await this.tenantQuery('DELETE FROM import_rows WHERE customer_id = $1 AND import_id = $2', [importId], transaction);
  }
}
