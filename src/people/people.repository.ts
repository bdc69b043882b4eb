import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { DEFAULT_ORDERING_COLUMNS, type OrderingColumns, type PageRequest } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type ListCondition, type ListResult, TenantRepository } from '../common/tenancy/tenant-repository.js';
import type { Transaction } from '../common/tenancy/transactions.js';
import type { ListPeopleQuery } from './dto/list-people.query.js';
import type { PersonColumns, StoredPerson } from './person-write.js';
import { Person } from './person.entity.js';

const ORDERING_COLUMNS: OrderingColumns<Person> = {
  id: DEFAULT_ORDERING_COLUMNS.id,
  external_id: 'externalId',
  created_at: DEFAULT_ORDERING_COLUMNS.created_at,
  updated_at: DEFAULT_ORDERING_COLUMNS.updated_at,
};

/** A person as a list page returns it, with the audiences they are members of. */
export type PersonRow = Person & { audienceIds: number[] };

/** Audience memberships (SPEC 10.2), read here by their table: people list members and a person's audiences. */
const MEMBERSHIPS = { table: 'audience_members', owner: 'person_id', value: 'audience_id' } as const;

/** A row the batch upsert wrote, and whether it was new. */
export interface UpsertedPerson {
  id: number;
  externalId: string;
  inserted: boolean;
}

const STORED_COLUMNS = `p.id, p.external_id AS "externalId", p.traits, p.consent_ad_user_data AS "consentAdUserData",
  p.consent_ad_personalization AS "consentAdPersonalization", p.country_code AS "countryCode", p.postal_code AS "postalCode",
  p.mobile_ad_id AS "mobileAdId", p.google_identifiers AS "googleIdentifiers", p.meta_identifiers AS "metaIdentifiers"`;

/**
 * The batch upsert's two statements (SPEC 10.1) and its parameter, named here for the repository
 * and for the benchmark's framework floor (bench/), which must send exactly what the service sends.
 */
export const PEOPLE_BATCH_SQL = {
  /** The stored people a batch names, locked: `$2` their external ids. */
  lock: `SELECT ${STORED_COLUMNS} FROM people p WHERE p.customer_id = $1 AND p.external_id = ANY($2::text[]) ORDER BY p.id FOR UPDATE`,
  /** Every row inserted or updated: `$2` is `upsertRecords()`. */
  upsert: `INSERT INTO people (customer_id, external_id, traits, consent_ad_user_data, consent_ad_personalization, country_code, postal_code, mobile_ad_id, matched_keys,
       google_identifiers, meta_identifiers)
     SELECT $1, r.external_id, r.traits, r.consent_ad_user_data, r.consent_ad_personalization, r.country_code, r.postal_code, r.mobile_ad_id,
       ARRAY(SELECT jsonb_array_elements_text(r.matched_keys)), decode(r.google_identifiers, 'hex'), decode(r.meta_identifiers, 'hex')
     FROM jsonb_to_recordset($2::jsonb) AS r(external_id text, traits jsonb, consent_ad_user_data text, consent_ad_personalization text,
       country_code text, postal_code text, mobile_ad_id uuid, matched_keys jsonb, google_identifiers text, meta_identifiers text)
     ORDER BY r.external_id
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
       updated_at = now()
     RETURNING id, external_id AS "externalId", (xmax = 0) AS inserted`,
};

/** The upsert's one parameter: the merged rows as a JSON array (hashes as hex). */
export function upsertRecords(rows: PersonColumns[]): string {
  return JSON.stringify(
    rows.map((row) => ({
      external_id: row.externalId,
      traits: row.traits,
      consent_ad_user_data: row.consentAdUserData,
      consent_ad_personalization: row.consentAdPersonalization,
      country_code: row.countryCode,
      postal_code: row.postalCode,
      mobile_ad_id: row.mobileAdId,
      matched_keys: row.matchedKeys,
      google_identifiers: row.googleIdentifiers.toString('hex'),
      meta_identifiers: row.metaIdentifiers.toString('hex'),
    })),
  );
}

/**
 * All SQL about people and their identifier hashes (packed on the person's row,
 * person-identifiers.ts). Batch writes are set-based: one statement for the whole batch (the rows
 * travel as one JSON parameter), never a statement per row, so a 1,000-row batch costs two round
 * trips: the stored rows read under lock, and the upsert.
 */
@Injectable()
export class PeopleRepository extends TenantRepository<Person> {
  constructor(@InjectRepository(Person) people: Repository<Person>, tenants: TenantContext) {
    super(people, tenants, 'person');
  }

  /** A page of people, each with the ids of the audiences they are members of (`audienceIds`). */
  list(filters: ListPeopleQuery, request: PageRequest): Promise<ListResult<PersonRow>> {
    const conditions: ListCondition<Person>[] = [];
    if (filters.external_id !== undefined) conditions.push({ property: 'externalId', operator: '=', value: filters.external_id });
    if (filters.audience !== undefined) conditions.push({ link: MEMBERSHIPS, value: filters.audience });
    return this.listPage<PersonRow>(conditions, request, {
      columns: ORDERING_COLUMNS,
      linkedIds: { as: 'audienceIds', link: MEMBERSHIPS },
    });
  }

  /** The ids of the audiences a person is a member of, ascending. */
  async audienceIds(personId: number, transaction?: Transaction): Promise<number[]> {
    const { rows } = await this.tenantQuery<{ audience_id: string }>(
      'SELECT audience_id FROM audience_members WHERE customer_id = $1 AND person_id = $2 ORDER BY audience_id',
      [personId],
      transaction,
    );
    return rows.map((row) => Number(row.audience_id));
  }

  /**
   * The stored people a batch names, locked until the transaction ends, so that the merge of
   * traits and identifiers computed from them is what gets written.
   */
  async lockedByExternalIds(externalIds: string[], transaction: Transaction): Promise<Map<string, StoredPerson>> {
    const { rows } = await this.tenantQuery<StoredPerson>(PEOPLE_BATCH_SQL.lock, [externalIds], transaction);
    return new Map(rows.map((row) => [row.externalId, row]));
  }

  /** One stored person, locked, for a PATCH; a 404 is the caller's (getById) to give. */
  async lockedById(id: number, transaction: Transaction): Promise<StoredPerson | undefined> {
    const { rows } = await this.tenantQuery<StoredPerson>(
      `SELECT ${STORED_COLUMNS} FROM people p WHERE p.customer_id = $1 AND p.id = $2 FOR UPDATE`,
      [id],
      transaction,
    );
    return rows[0];
  }

  /**
   * Inserts or updates every row in one statement (SPEC 10.1: upsert by external_id). The columns
   * are already merged with the stored rows read under lock; `xmax = 0` tells a fresh insert from
   * an update of an existing row. Rows are sorted by external_id so that two batches lock rows in
   * the same order.
   */
  async upsert(rows: PersonColumns[], transaction: Transaction): Promise<UpsertedPerson[]> {
    if (rows.length === 0) return [];
    const { rows: written } = await this.tenantQuery<UpsertedPerson>(PEOPLE_BATCH_SQL.upsert, [upsertRecords(rows)], transaction);
    return written;
  }

  /** A PATCH: the merged columns of one person, written back; the updated row comes back. */
  async update(id: number, columns: PersonColumns, transaction: Transaction): Promise<Person | undefined> {
    const { rows } = await this.tenantQuery<Person>(
      `UPDATE people SET external_id = $3, traits = $4::jsonb, consent_ad_user_data = $5, consent_ad_personalization = $6,
         country_code = $7, postal_code = $8, mobile_ad_id = $9, matched_keys = $10::text[], google_identifiers = $11, meta_identifiers = $12,
         updated_at = now()
       WHERE customer_id = $1 AND id = $2
       RETURNING customer_id AS "customerId", id, external_id AS "externalId", traits, consent_ad_user_data AS "consentAdUserData",
         consent_ad_personalization AS "consentAdPersonalization", country_code AS "countryCode", postal_code AS "postalCode",
         mobile_ad_id AS "mobileAdId", matched_keys AS "matchedKeys", created_at AS "createdAt", updated_at AS "updatedAt"`,
      [
        id,
        columns.externalId,
        JSON.stringify(columns.traits),
        columns.consentAdUserData,
        columns.consentAdPersonalization,
        columns.countryCode,
        columns.postalCode,
        columns.mobileAdId,
        columns.matchedKeys,
        columns.googleIdentifiers,
        columns.metaIdentifiers,
      ],
      transaction,
    );
    return rows[0];
  }

  /**
   * Erasure (SPEC 10.1): the person's memberships and row (with the hashes on it) go in one
   * transaction, so a person is never half erased. Answers the audiences the person left, whose destinations then sync the
   * removal: what each destination was sent is in its `sync_sent_members` rows, which the removal
   * consumes, so after it no hash of the person is left anywhere. A destination that will not sync
   * again keeps nothing of the person from here on.
   */
  async erase(id: number, transaction: Transaction): Promise<number[]> {
    // Memberships have no foreign key to cascade (AudienceMember): they go here, with the person.
    const { rows } = await this.tenantQuery<{ audience_id: string }>(
      'DELETE FROM audience_members WHERE customer_id = $1 AND person_id = $2 RETURNING audience_id',
      [id],
      transaction,
    );
    // What a destination that will never sync again was sent: an archived audience's, or one no
    // longer among its audience's destinations (SPEC 10.3: both stop its syncs). No removal would
    // ever consume these rows, so they go now, with the hashes in them; the platform's list stays
    // as it is, as it does for everyone else in it. One primary-key probe per destination.
    await this.tenantQuery(
      `DELETE FROM sync_sent_members s
       USING audience_destinations d
       WHERE d.customer_id = $1 AND s.customer_id = d.customer_id AND s.audience_id = d.audience_id
         AND s.connection_id = d.connection_id AND s.person_id = $2
         AND NOT EXISTS (
           SELECT 1 FROM audience_connections l
           JOIN audiences a ON a.customer_id = l.customer_id AND a.id = l.audience_id
           WHERE l.customer_id = d.customer_id AND l.audience_id = d.audience_id AND l.connection_id = d.connection_id
             AND a.status <> 'archived')`,
      [id],
      transaction,
    );
    await this.tenantQuery('DELETE FROM people WHERE customer_id = $1 AND id = $2', [id], transaction);
    return rows.map((row) => Number(row.audience_id));
  }
}
