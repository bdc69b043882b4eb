import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Audience } from '../audiences/audience.entity.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { TenantRepository } from '../common/tenancy/tenant-repository.js';
import type { Transaction } from '../common/tenancy/transactions.js';
import { DERIVED_ID_BYTES } from '../people/normalization/external-id.js';
import { IDENTIFIER_KIND_CODES, IDENTIFYING_KINDS, PACKED_IDENTIFIER_BYTES } from '../people/person-identifiers.js';

/** Who should be a member: a SELECT of person ids as `id`, over the workspace's rows, with its parameters from `$3` on. */
export interface WantedMembers {
  readonly sql: string;
  readonly parameters: unknown[];
}

const CHUNK = PACKED_IDENTIFIER_BYTES;
const IDENTIFYING_KIND_CODES = [...IDENTIFYING_KINDS].map((kind) => IDENTIFIER_KIND_CODES[kind]).join(', ');

/**
 * Removes from audience `$2` the members holding one of the Google email or phone hashes that
 * `named` selects (as `chunk`: 33 bytes, a kind byte and the hash, person-identifiers.ts). Google's
 * hashes suffice: every email and phone a person has is hashed for Google (a `phone_sha256` only
 * for Google). No index reaches inside the packed values, so the audience's members are read once
 * and their chunks hash-joined with `named`: about 1.9 s for a million members and a thousand
 * hashes, against 56 s for `= ANY(array)` per chunk (PostgreSQL 15, generic plan). Nothing is read
 * when `named` is empty. The statement begins with DELETE, so its count is the rows deleted.
 */
function removeHoldersOf(named: string): string {
  return `DELETE FROM audience_members m USING (
      SELECT DISTINCT a.person_id
        FROM audience_members a JOIN people p ON p.customer_id = a.customer_id AND p.id = a.person_id
        CROSS JOIN LATERAL generate_series(1, length(p.google_identifiers), ${CHUNK}) AS c(start)
        JOIN (${named}) AS named ON named.chunk = substring(p.google_identifiers FROM c.start FOR ${CHUNK})
       WHERE a.customer_id = $1 AND a.audience_id = $2 AND EXISTS (${named})) AS w
    WHERE m.customer_id = $1 AND m.audience_id = $2 AND m.person_id = w.person_id`;
}

/**
 * The Google email and phone chunks of an import's staged rows without an external_id of their own
 * (`$3`: the import). A staged row keeps no mark of a derived id, so one is read as derived when it
 * is `email:` or `phone:` and the first 32 hex of one of the row's own Google hashes of that kind
 * (external-id.ts).
 */
const STAGED_NAMED = `SELECT DISTINCT substring(s.google_identifiers FROM c.start FOR ${CHUNK}) AS chunk
    FROM import_rows s CROSS JOIN LATERAL generate_series(1, length(s.google_identifiers), ${CHUNK}) AS c(start)
   WHERE s.customer_id = $1 AND s.import_id = $3 AND get_byte(s.google_identifiers, c.start - 1) IN (${IDENTIFYING_KIND_CODES})
     AND s.external_id IN (
       SELECT CASE get_byte(s.google_identifiers, d.start - 1) WHEN ${IDENTIFIER_KIND_CODES.email} THEN 'email:' ELSE 'phone:' END
              || encode(substring(s.google_identifiers FROM d.start + 1 FOR ${DERIVED_ID_BYTES}), 'hex')
         FROM generate_series(1, length(s.google_identifiers), ${CHUNK}) AS d(start)
        WHERE get_byte(s.google_identifiers, d.start - 1) IN (${IDENTIFIER_KIND_CODES.email}, ${IDENTIFIER_KIND_CODES.phone}))`;

const REMOVE_HOLDERS_OF_HASHES = removeHoldersOf('SELECT DISTINCT n.chunk FROM unnest($3::bytea[]) AS n(chunk)');
const REMOVE_HOLDERS_OF_STAGED = removeHoldersOf(STAGED_NAMED);

/** What a recompute changed. */
export interface RecomputeOutcome {
  size: number;
  added: number;
  removed: number;
}

/**
 * All SQL about audience members (SPEC 10.2), part of the audience aggregate. A recompute is one
 * statement over sets: the wanted people once, an anti-join to insert the new members and one to
 * delete the gone, never a row at a time.
 */
@Injectable()
export class MembershipsRepository extends TenantRepository<Audience> {
  constructor(@InjectRepository(Audience) audiences: Repository<Audience>, tenants: TenantContext) {
    super(audiences, tenants, 'audience');
  }

  /**
   * The audience a recompute works on, held FOR KEY SHARE until the transaction ends, as a foreign
   * key check would hold it: a delete waits for the recompute and then removes the members it
   * wrote (a PATCH, which locks the row FOR UPDATE, waits too).
   */
  async heldForRecompute(audienceId: number, transaction: Transaction): Promise<Audience | undefined> {
    const { rows } = await this.tenantQuery<Audience>(
      `SELECT id, source_type AS "sourceType", rules, status, model_instance_id AS "modelInstanceId", min_score AS "minScore"
         FROM audiences WHERE customer_id = $1 AND id = $2 FOR KEY SHARE`,
      [audienceId],
      transaction,
    );
    return rows[0];
  }

  /** Makes the audience's members exactly `wanted`: inserts the new, deletes the gone, counts the rest. */
  async recompute(audienceId: number, wanted: WantedMembers, transaction: Transaction): Promise<RecomputeOutcome> {
    const { rows } = await this.tenantQuery<{ size: string; added: string; removed: string }>(
      `WITH wanted AS MATERIALIZED (${wanted.sql}),
       added AS (
         INSERT INTO audience_members (customer_id, audience_id, person_id)
         SELECT $1, $2, w.id FROM wanted w
          WHERE NOT EXISTS (SELECT 1 FROM audience_members m WHERE m.customer_id = $1 AND m.audience_id = $2 AND m.person_id = w.id)
         ORDER BY w.id
         RETURNING 1),
       removed AS (
         DELETE FROM audience_members m
          WHERE m.customer_id = $1 AND m.audience_id = $2 AND NOT EXISTS (SELECT 1 FROM wanted w WHERE w.id = m.person_id)
         RETURNING 1)
       SELECT (SELECT count(*) FROM wanted) AS size, (SELECT count(*) FROM added) AS added, (SELECT count(*) FROM removed) AS removed`,
      [audienceId, ...wanted.parameters],
      transaction,
    );
    const row = rows[0]!;
    return { size: Number(row.size), added: Number(row.added), removed: Number(row.removed) };
  }

  /** The people a rules tree selects, as `recompute` takes them (the condition is compiled SQL over `people p`). */
  static rulesWanted(condition: string, parameters: unknown[]): WantedMembers {
    return { sql: `SELECT p.id FROM people p WHERE p.customer_id = $1 AND ${condition}`, parameters };
  }

  /** The people whose score from the model's current version reaches the threshold (every scored person without one). */
  static modelWanted(modelInstanceId: number, version: number, minScore: number | null): WantedMembers {
    return {
      sql: `SELECT s.person_id AS id FROM model_scores s
             WHERE s.customer_id = $1 AND s.model_instance_id = $3 AND s.version = $4 AND ($5::double precision IS NULL OR s.score >= $5)`,
      parameters: [modelInstanceId, version, minScore],
    };
  }

  async count(audienceId: number, transaction: Transaction): Promise<number> {
    const { rows } = await this.tenantQuery<{ count: string }>(
      'SELECT count(*) AS count FROM audience_members WHERE customer_id = $1 AND audience_id = $2',
      [audienceId],
      transaction,
    );
    return Number(rows[0]?.count ?? 0);
  }

  /** Records the computed size; the audience's own `updated_at` is its configuration's and stays. */
  async setComputed(audienceId: number, size: number, transaction: Transaction): Promise<void> {
    await this.tenantQuery(
      'UPDATE audiences SET size = $3, members_updated_at = now() WHERE customer_id = $1 AND id = $2',
      [audienceId, size],
      transaction,
    );
  }

  /** Adds people to an upload audience; answers how many were not members yet. */
  async add(audienceId: number, personIds: number[], transaction: Transaction): Promise<number> {
    if (personIds.length === 0) return 0;
    const { rows } = await this.tenantQuery(
      `INSERT INTO audience_members (customer_id, audience_id, person_id)
       SELECT $1, $2, person_id FROM unnest($3::bigint[]) AS person_id ORDER BY person_id
       ON CONFLICT DO NOTHING RETURNING person_id`,
      [audienceId, personIds],
      transaction,
    );
    return rows.length;
  }

  /**
   * Removes the people a removal names from an upload audience (SPEC 10.2): the people with one of
   * `externalIds` (an index probe each), then the members holding one of `identifiers` (Google email
   * and phone chunks: a kind byte and a hash), which reads the audience's members once, and only
   * when a row named identifiers. Answers how many were members.
   */
  async removeNamed(
    audienceId: number,
    named: { externalIds: string[]; identifiers: Buffer[] },
    transaction: Transaction,
  ): Promise<number> {
    let removed = 0;
    if (named.externalIds.length > 0) {
      const { affected } = await this.tenantQuery(
        `DELETE FROM audience_members m USING unnest($3::text[]) AS e(external_id), people p
          WHERE p.customer_id = $1 AND p.external_id = e.external_id
            AND m.customer_id = $1 AND m.audience_id = $2 AND m.person_id = p.id`,
        [audienceId, named.externalIds],
        transaction,
      );
      removed += affected;
    }
    if (named.identifiers.length > 0) {
      const { affected } = await this.tenantQuery(REMOVE_HOLDERS_OF_HASHES, [audienceId, named.identifiers], transaction);
      removed += affected;
    }
    return removed;
  }

  /**
   * An import's staged people applied to an upload audience (SPEC 10.1/10.2), inside the merge's
   * transaction: `add` makes them members, `remove` takes them out, `replace` does both, so the
   * members become exactly the file's people at the commit (a concurrent reader sees the old
   * members or the new, never a mix). People are matched by the staged external ids, and a removal's
   * rows without their own also by their email and phone hashes; the size is counted again.
   */
  async applyImport(
    audienceId: number,
    importId: number,
    mode: 'add' | 'remove' | 'replace',
    transaction: Transaction,
  ): Promise<RecomputeOutcome> {
    let added = 0;
    let removed = 0;
    if (mode !== 'remove') {
      const { rows } = await this.tenantQuery(
        `INSERT INTO audience_members (customer_id, audience_id, person_id)
         SELECT $1, $2, p.id FROM import_rows s JOIN people p ON p.customer_id = s.customer_id AND p.external_id = s.external_id
          WHERE s.customer_id = $1 AND s.import_id = $3
         ORDER BY p.id
         ON CONFLICT DO NOTHING RETURNING person_id`,
        [audienceId, importId],
        transaction,
      );
      added = rows.length;
    }
    if (mode === 'remove') {
      // As a removal through the API (removeNamed): by the staged external ids, then a row without
      // its own external_id also by its email and phone hashes.
      ({ affected: removed } = await this.tenantQuery(
        `DELETE FROM audience_members m USING import_rows s, people p
          WHERE m.customer_id = $1 AND m.audience_id = $2 AND s.customer_id = $1 AND s.import_id = $3
            AND p.customer_id = $1 AND p.external_id = s.external_id AND m.person_id = p.id`,
        [audienceId, importId],
        transaction,
      ));
      const { affected } = await this.tenantQuery(REMOVE_HOLDERS_OF_STAGED, [audienceId, importId], transaction);
      removed += affected;
    } else if (mode === 'replace') {
      ({ affected: removed } = await this.tenantQuery(
        `DELETE FROM audience_members m
          WHERE m.customer_id = $1 AND m.audience_id = $2 AND NOT EXISTS (
            SELECT 1 FROM import_rows s JOIN people p ON p.customer_id = s.customer_id AND p.external_id = s.external_id
             WHERE s.customer_id = $1 AND s.import_id = $3 AND p.id = m.person_id)`,
        [audienceId, importId],
        transaction,
      ));
    }
    const size = await this.count(audienceId, transaction);
    await this.setComputed(audienceId, size, transaction);
    return { size, added, removed };
  }

  /** The audiences a change of people or of a model touches: every one not archived, or a model's. */
  async audienceIdsToRecompute(filter: { modelInstanceId?: number }, transaction: Transaction): Promise<number[]> {
    const { rows } =
      filter.modelInstanceId === undefined
        ? await this.tenantQuery<{ id: number }>(
            "SELECT id FROM audiences WHERE customer_id = $1 AND status <> 'archived' ORDER BY id",
            [],
            transaction,
          )
        : await this.tenantQuery<{ id: number }>(
            "SELECT id FROM audiences WHERE customer_id = $1 AND status <> 'archived' AND model_instance_id = $2 AND source_type = 'model' ORDER BY id",
            [filter.modelInstanceId],
            transaction,
          );
    return rows.map((row) => Number(row.id));
  }
}
