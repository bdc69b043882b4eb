import { Injectable } from '@nestjs/common';
import { ApiError, type FieldErrors } from '../common/errors/api-error.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import { type Page, pageOf } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type Transaction, Transactions } from '../common/tenancy/transactions.js';
import { JOBS } from '../jobs/job-definitions.js';
import { Jobs } from '../jobs/jobs.service.js';
import type { BatchResultDto, PersonDto } from './dto/person.dto.js';
import type { ListPeopleQuery } from './dto/list-people.query.js';
import { PeopleRepository } from './people.repository.js';
import { toPersonDto } from './person.mapper.js';
import { IDENTIFYING_KINDS, packIdentifiers } from './person-identifiers.js';
import { hashesOf, mergeBatch, mergedColumns, normalizeWith, readBatch, readPersonWrite, tooManyTraits } from './person-write.js';

const EXTERNAL_ID_TAKEN = 'external_id_taken';

/** What an upsert of rows wrote: counts, the rows rejected, and each applied row's person id by index. */
export interface UpsertedRows {
  created: number;
  updated: number;
  rejected: BatchResultDto['rejected'];
  people: { index: number; personId: number }[];
}

/**
 * The people a removal names (`namedForRemoval`): by external id, and by Google email and phone
 * hashes packed as people hold them (a kind byte and a hash each) that match any member holding one.
 */
export interface NamedForRemoval {
  externalIds: string[];
  identifiers: Buffer[];
  rejected: BatchResultDto['rejected'];
}

/** SPEC 10.1 for people, shared by the REST controller and (later) the MCP tools. */
@Injectable()
export class PeopleService {
  constructor(
    private readonly transactions: Transactions,
    private readonly people: PeopleRepository,
    private readonly jobs: Jobs,
    private readonly tenants: TenantContext,
  ) {}

  async list(query: ListPeopleQuery, url: URL): Promise<Page<PersonDto>> {
    return pageOf(await this.people.list(query, query.page), query.page, url, (row) => toPersonDto(row, row.audienceIds));
  }

  async get(id: number): Promise<PersonDto> {
    const person = await this.people.getById(id);
    return toPersonDto(person, await this.people.audienceIds(id));
  }

  /**
   * Upserts up to 1,000 people by external_id in one transaction (SPEC 10.1). Each row is read and
   * normalised first; rows with errors are rejected with their index and the others applied. The
   * database sees two statements whatever the batch size: the stored rows named (locked), then one
   * upsert of every person with their merged hashes. Two rows with one external_id would make the upsert touch a row twice, so the later
   * one is rejected (`duplicate_external_id`).
   */
  async batch(rows: unknown[]): Promise<BatchResultDto> {
    const { created, updated, rejected } = await this.transactions.run(async (transaction) => {
      const written = await this.upsertRows(rows, transaction);
      if (written.people.length > 0) await this.membershipInputsChanged(transaction);
      return written;
    });
    return { created, updated, rejected };
  }

  /**
   * The batch upsert inside the caller's transaction, for the batch route and for uploads to an
   * audience (SPEC 10.2: added rows are upserted as people first). Answers the rows' person ids by
   * index; the caller tells the memberships that people changed.
   */
  async upsertRows(rows: unknown[], transaction: Transaction): Promise<UpsertedRows> {
    const reading = readBatch(rows);
    const people: { index: number; personId: number }[] = [];
    let created = 0;
    if (reading.accepted.length > 0) {
      const stored = await this.people.lockedByExternalIds(reading.externalIds, transaction);
      const applied = mergeBatch(reading, stored);
      const written = await this.people.upsert(
        applied.map((row) => row.columns),
        transaction,
      );
      const idOf = new Map(written.map((row) => [row.externalId, Number(row.id)]));
      for (const { index, columns } of applied) people.push({ index, personId: idOf.get(columns.externalId)! });
      created = written.filter((row) => row.inserted).length;
    }
    const rejected = reading.rejected.sort((a, b) => a.index - b.index);
    return { created, updated: people.length - created, rejected, people };
  }

  /**
   * What the rows of a removal from an audience name (SPEC 10.2: removed rows are matched by
   * `external_id` or identifiers). A row with its own external_id names that person only. A row
   * without one names the person its derived id was stored for (as an added row without one is)
   * and every member holding one of its email or phone hashes, whatever their external_id: a
   * person added as `crm-7` leaves when removed by their email alone. Rows that name nobody are
   * rejected with their errors.
   */
  namedForRemoval(rows: unknown[]): NamedForRemoval {
    const rejected: BatchResultDto['rejected'] = [];
    const externalIds: string[] = [];
    const identifiers: Buffer[] = [];
    rows.forEach((row, index) => {
      const write = readPersonWrite(row);
      if (write.externalId === undefined) {
        rejected.push({ index, errors: write.errors });
        return;
      }
      externalIds.push(write.externalId);
      if (!write.externalIdDerived) return;
      // One 33-byte chunk per Google email or phone hash, as people.google_identifiers holds them
      // (person-identifiers.ts): every email and phone is hashed for Google, so Meta's add nothing.
      for (const hash of hashesOf(write))
        if (hash.platform === 'google' && IDENTIFYING_KINDS.has(hash.kind)) identifiers.push(packIdentifiers([hash]));
    });
    return { externalIds, identifiers, rejected };
  }

  /** People changed in this workspace: its audiences get a recompute, debounced (SPEC 10.2). */
  async membershipInputsChanged(transaction: Transaction): Promise<void> {
    const customerId = this.tenants.current().customerId;
    await this.jobs.enqueue(transaction, JOBS.membershipWorkspaceChanged, { customerId }, { key: String(customerId) });
  }

  /** PATCH: the body is one person write; its errors are a 400 under their field paths. */
  async update(id: number, body: unknown): Promise<PersonDto> {
    const write = readPersonWrite(body);
    // A PATCH names the person by its id: without external_id the stored one stays (none is derived).
    const given = (body as Record<string, unknown>).external_id;
    if (given === undefined) {
      write.externalId = undefined;
      if (write.errors.external_id?.includes('missing_external_id')) delete write.errors.external_id;
    } else if (given === null) {
      write.errors.external_id = ['invalid_external_id'];
    }
    this.refuseErrors(write.errors);
    try {
      return await this.transactions.run(async (transaction) => {
        const stored = await this.people.lockedById(id, transaction);
        if (stored === undefined) throw ApiError.notFound();
        normalizeWith(write, stored);
        const columns = mergedColumns(write, write.externalId ?? stored.externalId, stored);
        if (tooManyTraits(columns)) write.errors.traits = ['too_many_traits'];
        this.refuseErrors(write.errors);
        const person = await this.people.update(id, columns, transaction);
        if (person === undefined) throw ApiError.notFound();
        await this.membershipInputsChanged(transaction);
        return toPersonDto(person, await this.people.audienceIds(id, transaction));
      });
    } catch (error) {
      if (isUniqueViolation(error, 'people_customer_external_id_key')) throw ApiError.field('external_id', EXTERNAL_ID_TAKEN);
      throw error;
    }
  }

  /**
   * Erasure (SPEC 10.1): the person and every hash of them go in one transaction, and each
   * audience they left gets a sync (debounced), which removes them from its destinations with
   * what each was sent, and forgets that too.
   */
  async erase(id: number): Promise<void> {
    await this.transactions.run(async (transaction) => {
      await this.people.getById(id, { transaction, lock: true });
      const audienceIds = await this.people.erase(id, transaction);
      await this.membershipInputsChanged(transaction);
      const customerId = this.tenants.current().customerId;
      for (const audienceId of audienceIds)
        await this.jobs.enqueue(
          transaction,
          JOBS.syncMembershipChanged,
          { customerId, audienceId },
          { key: `${customerId}:${audienceId}` },
        );
    });
  }

  private refuseErrors(errors: FieldErrors): void {
    if (Object.keys(errors).length > 0) throw ApiError.validation(errors);
  }
}
