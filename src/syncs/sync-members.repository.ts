import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { TenantRepository } from '../common/tenancy/tenant-repository.js';
import { entityManagerOf, type Transaction } from '../common/tenancy/transactions.js';
import { slices } from '../destinations/destination-types.js';
import { SyncRun } from './sync-run.entity.js';

/** One destination: an audience's members going to one connection, whose hashes are of `platform`'s normal form. */
export interface DiffScope {
  audienceId: number;
  connectionId: number;
  platform: 'google' | 'meta';
}

/** A person as one platform receives them, or as the destination last accepted them. */
export interface MemberState {
  personId: number;
  /** Each identifier as one byte of kind (IDENTIFIER_KIND_CODES) and its 32-byte hash, sorted. */
  identifiers: Buffer;
  regionCode: string | null;
  postalCode: string | null;
  mobileAdId: string | null;
  /** Two letters, `ad_user_data` then `ad_personalization`: g(ranted), d(enied), u(nspecified). */
  consent: string;
}

/** A member to send: the state now, and (for someone sent before) the identifiers sent then. */
export interface MemberToSend extends MemberState {
  /** The person's `updated_at` as PostgreSQL writes it (microseconds: a JavaScript Date would drop them, and the next diff would see a change). */
  updatedAt: string;
  sentIdentifiers: Buffer | null;
}

export interface DiffCounts {
  plannedAdd: number;
  plannedRemove: number;
  skippedConsent: number;
  skippedUnmatchable: number;
}

/** The diff of one destination: its counts, and who to send and to remove, in person-id order. */
export interface DiffPlan extends DiffCounts {
  addIds: number[];
  removeIds: number[];
}

/** People settled per statement: a page's worth of ids. */
const SETTLE_PAGE = 10_000;

// The platform's packed hashes of the person (person-identifiers.ts), as the sent rows keep them ($4: the platform).
const IDENTIFIERS = `CASE WHEN $4 = 'google' THEN p.google_identifiers ELSE p.meta_identifiers END`;

// The clear fields and consent as the platform receives them ($4: the platform).
const CLEAR_FIELDS = `CASE WHEN $4 = 'google' THEN p.country_code END AS "regionCode",
    CASE WHEN $4 = 'google' THEN p.postal_code END AS "postalCode",
    CASE WHEN $4 = 'meta' THEN p.mobile_ad_id::text END AS "mobileAdId",
    left(p.consent_ad_user_data, 1) || left(p.consent_ad_personalization, 1) AS consent`;

/**
 * Whether the person has a key the platform takes ($4: the platform), decided as the send decides
 * it (buildGoogleMember, readMetaMember): someone planned whom the builder then refuses as
 * `unmatchable` is never recorded as sent, so every later plan would count them again (SPEC 10.3:
 * they are `skipped_unmatchable`). Google's keys are `matched_keys`, read from its hashes and the
 * clear address parts (a mobile ad id is Meta's only, SPEC 10.1). Meta's are read from its own
 * hashes (`person_identifier_kinds`, migration 1764400000000) and the mobile ad id: a `phone_sha256`
 * is Google's form only, so the `phone` it puts in `matched_keys` is no key for Meta. A name or
 * place alone matches no one: an address needs all its parts. An email, though, is hashed for both
 * platforms whenever it is for Google (`email_sha256` too), so `matched_keys` answers for most
 * people without unpacking their Meta hashes, about 1 µs each in PL/pgSQL: a million members with
 * 90 % emails took 0.25 s instead of 0.77 s (PostgreSQL 15).
 */
const MATCHABLE = `CASE WHEN $4 = 'google' THEN p.matched_keys && '{email,phone,address}'::text[]
    WHEN p.mobile_ad_id IS NOT NULL OR 'email' = ANY(p.matched_keys) THEN true
    ELSE person_identifier_kinds(p.meta_identifiers) && '{email,phone}'::text[]
      OR person_identifier_kinds(p.meta_identifiers) @> '{first_name,last_name,country,zip}'::text[] END`;

// A member the platform may receive ($4: the platform): no consent denied, and a key it takes.
const SENDABLE = `p.consent_ad_user_data <> 'denied' AND p.consent_ad_personalization <> 'denied' AND (${MATCHABLE})`;

/**
 * The diff's statements: $1 the workspace, $2 the audience, $3 the connection, $4 the platform
 * (`google` | `meta`); a read or settle by id adds $5, the person ids. `toRemove` takes $1 to $3
 * and its ids as $4. Exported for the benchmark's plans (bench/syncs.ts).
 */
export const DIFF_SQL = {
  settle: `UPDATE sync_sent_members s SET person_updated_at = c.updated_at
         FROM (
           SELECT u.person_id, p.updated_at, ${IDENTIFIERS} AS identifiers, ${CLEAR_FIELDS}
             FROM unnest($5::bigint[]) AS u(person_id)
             CROSS JOIN LATERAL (SELECT * FROM people p WHERE p.customer_id = $1 AND p.id = u.person_id OFFSET 0) p) c
        WHERE s.customer_id = $1 AND s.audience_id = $2 AND s.connection_id = $3 AND s.person_id = c.person_id
          AND s.identifiers = c.identifiers AND s.consent = c.consent AND s.region_code IS NOT DISTINCT FROM c."regionCode"
          AND s.postal_code IS NOT DISTINCT FROM c."postalCode" AND s.mobile_ad_id IS NOT DISTINCT FROM c."mobileAdId"::uuid
        RETURNING s.person_id`,
  plan: `WITH members AS MATERIALIZED (
         SELECT m.person_id,
                (p.consent_ad_user_data = 'denied' OR p.consent_ad_personalization = 'denied') AS denied,
                (${MATCHABLE}) AS matchable,
                (s.person_id IS NULL OR s.person_updated_at <> p.updated_at) AS changed,
                (s.person_id IS NOT NULL) AS sent
           FROM audience_members m
           JOIN people p ON p.customer_id = m.customer_id AND p.id = m.person_id
           LEFT JOIN sync_sent_members s ON s.customer_id = m.customer_id AND s.audience_id = m.audience_id AND s.connection_id = $3 AND s.person_id = m.person_id
          WHERE m.customer_id = $1 AND m.audience_id = $2)
       SELECT (SELECT coalesce(array_agg(person_id ORDER BY person_id), '{}') FROM members WHERE NOT denied AND matchable AND changed AND NOT sent) AS "newIds",
              (SELECT coalesce(array_agg(person_id ORDER BY person_id), '{}') FROM members WHERE NOT denied AND matchable AND changed AND sent) AS "changedIds",
              (SELECT coalesce(array_agg(s.person_id ORDER BY s.person_id), '{}') FROM sync_sent_members s
                WHERE s.customer_id = $1 AND s.audience_id = $2 AND s.connection_id = $3
                  AND NOT EXISTS (SELECT 1 FROM members w WHERE w.person_id = s.person_id AND NOT w.denied AND w.matchable)) AS "removeIds",
              (SELECT count(*) FROM members WHERE denied) AS "skippedConsent",
              (SELECT count(*) FROM members WHERE NOT denied AND NOT matchable) AS "skippedUnmatchable"`,
  toSend: `SELECT p.id AS "personId", p.updated_at::text AS "updatedAt", ${IDENTIFIERS} AS identifiers,
              ${CLEAR_FIELDS}, s.identifiers AS "sentIdentifiers"
         FROM unnest($5::bigint[]) AS u(person_id)
         CROSS JOIN LATERAL (SELECT * FROM people p WHERE p.customer_id = $1 AND p.id = u.person_id OFFSET 0) p
         LEFT JOIN LATERAL (
           SELECT s.identifiers FROM sync_sent_members s
            WHERE s.customer_id = $1 AND s.audience_id = $2 AND s.connection_id = $3 AND s.person_id = u.person_id OFFSET 0) s ON true
        WHERE ${SENDABLE}
        ORDER BY p.id`,
  toRemove: `SELECT s.person_id AS "personId", s.identifiers, s.region_code AS "regionCode", s.postal_code AS "postalCode",
              s.mobile_ad_id::text AS "mobileAdId", s.consent
         FROM unnest($4::bigint[]) AS u(person_id)
         CROSS JOIN LATERAL (
           SELECT * FROM sync_sent_members s
            WHERE s.customer_id = $1 AND s.audience_id = $2 AND s.connection_id = $3 AND s.person_id = u.person_id OFFSET 0) s
        ORDER BY s.person_id`,
};

/**
 * The diff of SPEC 10.3, in SQL over sets: an audience's sendable members against what one
 * destination last accepted (`sync_sent_members`). Each statement narrows to the workspace and
 * the destination. A person whose row has not been written since it was sent (same `updated_at`)
 * is in step without reading their identifiers; the others are compared identifier by identifier.
 * A run plans once (one statement: who to send, who to remove, the skips), then reads the people
 * of each page by id, so no long transaction stays open and a resumed run simply plans again;
 * someone who changes between the plan and their page is sent as they are then, and a removal
 * that a re-join made wrong is undone by the next run.
 *
 * Plans do not depend on statistics, which are stale right after a bulk load (measured: with a
 * never-analysed 10,000-row `audience_members`, a removal read joined every sent row with every
 * member, 8 s and counting): the whole-destination statement (`plan`) runs
 * with nested loops off, as hash joins, and the by-id reads are correlated subqueries
 * fenced with `OFFSET 0`, each one probe of a primary key whatever the estimates.
 */
@Injectable()
export class SyncMembersRepository extends TenantRepository<SyncRun> {
  constructor(@InjectRepository(SyncRun) runs: Repository<SyncRun>, tenants: TenantContext) {
    super(runs, tenants, 'run');
  }

  /**
   * Who a run sends and removes, and what it skips: one statement over the whole destination, then
   * the people written since they were sent (few, usually) settled by id: those whose identifiers,
   * clear fields and consent are still what was sent (a trait changed, say) get the new
   * `updated_at` on their sent row and are no difference, so the plan's counts are exact.
   */
  async plan(scope: DiffScope): Promise<DiffPlan> {
    const row = await this.wholeSet(async (transaction) => {
      const { rows } = await this.tenantQuery<{
        newIds: string[];
        changedIds: string[];
        removeIds: string[];
        skippedConsent: string;
        skippedUnmatchable: string;
      }>(DIFF_SQL.plan, [scope.audienceId, scope.connectionId, scope.platform], transaction);
      return rows[0]!;
    });
    const changed = row.changedIds.map(Number);
    const settled = new Set<number>();
    for (const page of slices(changed, SETTLE_PAGE)) for (const id of await this.settle(scope, page)) settled.add(id);
    const addIds = [...row.newIds.map(Number), ...changed.filter((id) => !settled.has(id))].sort((a, b) => a - b);
    const removeIds = row.removeIds.map(Number);
    return {
      addIds,
      removeIds,
      plannedAdd: addIds.length,
      plannedRemove: removeIds.length,
      skippedConsent: Number(row.skippedConsent),
      skippedUnmatchable: Number(row.skippedUnmatchable),
    };
  }

  /** The ids among `personIds` whose sent row was brought up to date because nothing of theirs the platform takes changed. */
  private async settle(scope: DiffScope, personIds: readonly number[]): Promise<number[]> {
    const { rows } = await this.tenantQuery<{ person_id: string }>(DIFF_SQL.settle, [
      scope.audienceId,
      scope.connectionId,
      scope.platform,
      personIds,
    ]);
    return rows.map((settled) => Number(settled.person_id));
  }

  /** A statement over a whole destination, planned with hash joins. */
  private wholeSet<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    return this.repository.manager.transaction(async (manager) => {
      const transaction = manager as unknown as Transaction;
      await entityManagerOf(transaction).query('SET LOCAL enable_nestloop = off');
      return work(transaction);
    });
  }

  /** The members of a page of the plan's `addIds`, as they are now (still sendable), with what was sent of them before. */
  async toSend(scope: DiffScope, personIds: readonly number[]): Promise<MemberToSend[]> {
    if (personIds.length === 0) return [];
    const { rows } = await this.tenantQuery<MemberToSend>(DIFF_SQL.toSend, [
      scope.audienceId,
      scope.connectionId,
      scope.platform,
      personIds,
    ]);
    return rows.map((row) => ({ ...row, personId: Number(row.personId) }));
  }

  /** The people of a page of the plan's `removeIds`, as the destination was sent them. */
  async toRemove(scope: DiffScope, personIds: readonly number[]): Promise<MemberState[]> {
    if (personIds.length === 0) return [];
    const { rows } = await this.tenantQuery<MemberState>(DIFF_SQL.toRemove, [scope.audienceId, scope.connectionId, personIds]);
    return rows.map((row) => ({ ...row, personId: Number(row.personId) }));
  }

  /** Records members the platform accepted, as they were sent, in one statement (per accepted batch). */
  async recordSent(scope: DiffScope, members: readonly MemberToSend[], requestId: string | null): Promise<void> {
    if (members.length === 0) return;
    await this.tenantQuery(
      `INSERT INTO sync_sent_members (customer_id, audience_id, connection_id, person_id, identifiers, region_code, postal_code,
         mobile_ad_id, consent, person_updated_at, request_id)
       SELECT $1, $2, $3, r.person_id, r.identifiers, r.region_code, r.postal_code, r.mobile_ad_id, r.consent, r.updated_at, $11
         FROM unnest($4::bigint[], $5::bytea[], $6::text[], $7::text[], $8::uuid[], $9::text[], $10::timestamptz[])
           AS r(person_id, identifiers, region_code, postal_code, mobile_ad_id, consent, updated_at)
       ON CONFLICT (customer_id, audience_id, connection_id, person_id) DO UPDATE SET
         identifiers = EXCLUDED.identifiers, region_code = EXCLUDED.region_code, postal_code = EXCLUDED.postal_code,
         mobile_ad_id = EXCLUDED.mobile_ad_id, consent = EXCLUDED.consent, person_updated_at = EXCLUDED.person_updated_at,
         request_id = EXCLUDED.request_id`,
      [
        scope.audienceId,
        scope.connectionId,
        members.map((member) => member.personId),
        members.map((member) => member.identifiers),
        members.map((member) => member.regionCode),
        members.map((member) => member.postalCode),
        members.map((member) => member.mobileAdId),
        members.map((member) => member.consent),
        members.map((member) => member.updatedAt),
        requestId,
      ],
    );
  }

  /** Forgets people the platform accepted to remove: nothing of them is left for this destination. */
  async recordRemoved(scope: DiffScope, personIds: readonly number[]): Promise<void> {
    if (personIds.length === 0) return;
    // The ids' range bounds the index scan: with `= ANY` alone a generic plan on stale statistics
    // filtered the destination's every row (1.25 s a batch at 984,500 sent rows, measured).
    await this.tenantQuery(
      `DELETE FROM sync_sent_members
        WHERE customer_id = $1 AND audience_id = $2 AND connection_id = $3 AND person_id BETWEEN $5 AND $6 AND person_id = ANY($4::bigint[])`,
      [scope.audienceId, scope.connectionId, personIds, Math.min(...personIds), Math.max(...personIds)],
    );
  }

  /**
   * Google accepted a removal and gives its verdict later: the people's rows stay, with their
   * hashes, marked with the request until then (`settleRemoval`), so a failed removal is retried.
   */
  async recordRemovalPending(scope: DiffScope, personIds: readonly number[], requestId: string): Promise<void> {
    if (personIds.length === 0) return;
    await this.tenantQuery(
      `UPDATE sync_sent_members SET removal_request_id = $7
        WHERE customer_id = $1 AND audience_id = $2 AND connection_id = $3 AND person_id BETWEEN $5 AND $6 AND person_id = ANY($4::bigint[])`,
      [scope.audienceId, scope.connectionId, personIds, Math.min(...personIds), Math.max(...personIds), requestId],
    );
  }

  /**
   * Google's verdict on a removal: done (success or partial success) forgets the people it
   * removed; failed keeps them as sent and clears the request, so the next sync removes them again.
   * Answers how many rows the verdict settled.
   */
  async settleRemoval(scope: Omit<DiffScope, 'platform'>, requestId: string, removed: boolean): Promise<number> {
    const { affected } = await this.tenantQuery(
      removed
        ? 'DELETE FROM sync_sent_members WHERE customer_id = $1 AND audience_id = $2 AND connection_id = $3 AND removal_request_id = $4'
        : 'UPDATE sync_sent_members SET removal_request_id = NULL WHERE customer_id = $1 AND audience_id = $2 AND connection_id = $3 AND removal_request_id = $4',
      [scope.audienceId, scope.connectionId, requestId],
    );
    return affected;
  }

  /**
   * Google failed a request whole after accepting it: its members are forgotten as sent, so the
   * next sync sends them again (a member sent again by a later request keeps that request's id).
   */
  async forgetRequest(scope: Omit<DiffScope, 'platform'>, requestId: string): Promise<number> {
    const { affected } = await this.tenantQuery(
      'DELETE FROM sync_sent_members WHERE customer_id = $1 AND audience_id = $2 AND connection_id = $3 AND request_id = $4',
      [scope.audienceId, scope.connectionId, requestId],
    );
    return affected;
  }

  /** How many people the destination has, as far as this service knows (a removal Google has not ruled on is counted gone). */
  async sentCount(scope: Omit<DiffScope, 'platform'>): Promise<number> {
    const { rows } = await this.tenantQuery<{ count: string }>(
      'SELECT count(*) AS count FROM sync_sent_members WHERE customer_id = $1 AND audience_id = $2 AND connection_id = $3 AND removal_request_id IS NULL',
      [scope.audienceId, scope.connectionId],
    );
    return Number(rows[0]?.count ?? 0);
  }
}
