import { Injectable } from '@nestjs/common';
import { AiModelInstancesRepository } from '../ai-model-instances/ai-model-instances.repository.js';
import { ApiError, type FieldErrors } from '../common/errors/api-error.js';
import { constraintOf, isForeignKeyViolation, isUniqueViolation } from '../common/errors/database-errors.js';
import type { Page } from '../common/pagination/pagination.js';
import { pageOf } from '../common/pagination/pagination.js';
import { MESSAGES } from '../common/validation/fields.js';
import { assignFields, changedFields, createdState, mergedState, type StateOf } from '../common/validation/field-table.js';
import { ConnectionsRepository } from '../connections/connections.repository.js';
import { toAudienceDetailDto, toAudienceDto } from './audience.mapper.js';
import { AudienceDestinationsRepository } from './audience-destinations.repository.js';
import { audienceTransitionError } from './audience-status.js';
import { Audience } from './audience.entity.js';
import { AudiencesRepository } from './audiences.repository.js';
import type { ListAudiencesQuery } from './dto/list-audiences.query.js';
import {
  AUDIENCE_FIELDS,
  type AudienceDetailDto,
  type AudienceDto,
  type CreateAudienceDto,
  MIN_SCORE_ONLY_FOR_MODEL,
  MODEL_INSTANCE_REQUIRED,
  type UpdateAudienceDto,
} from './dto/audience.dto.js';
import { Transactions, type Transaction } from '../common/tenancy/transactions.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { JOBS } from '../jobs/job-definitions.js';
import { Jobs } from '../jobs/jobs.service.js';
import { rulesErrors } from './rules/audience-rules.js';

const NAME_TAKEN = 'An audience with this name already exists.';

/** The fields whose change changes who the members are (SPEC 10.2); a status change too: a draft turned active is recomputed. */
const MEMBERSHIP_INPUTS = new Set(['rules', 'source_type', 'model_instance', 'min_score', 'status']);

/** The rules of SPEC section 3 for audiences, shared by the REST controller and the MCP tools. */
@Injectable()
export class AudiencesService {
  constructor(
    private readonly transactions: Transactions,
    private readonly audiences: AudiencesRepository,
    private readonly models: AiModelInstancesRepository,
    private readonly connections: ConnectionsRepository,
    private readonly jobs: Jobs,
    private readonly tenants: TenantContext,
    private readonly destinations: AudienceDestinationsRepository,
  ) {}

  async list(query: ListAudiencesQuery, url: URL): Promise<Page<AudienceDto>> {
    return pageOf(await this.audiences.list(query, query.page), query.page, url, (row) => toAudienceDto(row, row.connectionIds));
  }

  /** One statement for the audience, its links and their state: the destinations are the linked connections, in id order. */
  async get(id: number): Promise<AudienceDetailDto> {
    const { audience, destinations } = await this.destinations.getWithDestinations(id);
    return toAudienceDetailDto(
      audience,
      destinations.map((destination) => destination.connectionId),
      destinations,
    );
  }

  async create(input: CreateAudienceDto): Promise<AudienceDetailDto> {
    if (input.status !== undefined) this.checkTransition('draft', input.status);
    const state: AudienceState = {
      ...createdState<Audience, typeof AUDIENCE_FIELDS>(AUDIENCE_FIELDS, input),
      connections: input.connections ?? [],
    };
    return this.write(async (transaction) => {
      await this.validate(state, undefined, undefined, transaction);
      const { connections, ...columns } = state;
      const audience = await this.audiences.insert(columns, transaction);
      if (connections.length > 0) await this.audiences.addConnections(audience.id, connections, transaction);
      await this.recomputeLater(audience.id, transaction);
      return toAudienceDetailDto(
        audience,
        [...connections].sort((a, b) => a - b),
        await this.destinations.forAudience(audience.id, transaction),
      );
    });
  }

  /**
   * PATCH: the merged state is validated as a whole. An archived audience is read-only: a change
   * is a 400, a PATCH that changes nothing is a 200 (SPEC section 3).
   */
  async update(id: number, input: UpdateAudienceDto): Promise<AudienceDetailDto> {
    return this.write(async (transaction) => {
      const audience = await this.audiences.getById(id, { transaction, lock: true });
      const currentConnections = (await this.audiences.connectionIds([id], transaction)).get(id) ?? [];
      const next: AudienceState = {
        ...mergedState<Audience, typeof AUDIENCE_FIELDS>(AUDIENCE_FIELDS, audience, input),
        connections: input.connections ?? currentConnections,
      };
      const connectionsChanged = !sameIds(next.connections, currentConnections);
      if (!connectionsChanged && changedFields<Audience, typeof AUDIENCE_FIELDS>(AUDIENCE_FIELDS, audience, next).length === 0)
        return toAudienceDetailDto(audience, currentConnections, await this.destinations.forAudience(id, transaction));
      if (audience.status === 'archived') throw ApiError.field('status', 'This audience is archived and cannot be changed.');
      this.checkTransition(audience.status, next.status);
      await this.validate(next, audience, currentConnections, transaction);

      const changed = changedFields<Audience, typeof AUDIENCE_FIELDS>(AUDIENCE_FIELDS, audience, next);
      assignFields<Audience, typeof AUDIENCE_FIELDS>(AUDIENCE_FIELDS, audience, next);
      const saved = await this.audiences.save(audience, transaction);
      if (changed.some((field) => MEMBERSHIP_INPUTS.has(field))) await this.recomputeLater(id, transaction);
      if (connectionsChanged) await this.audiences.replaceConnections(id, next.connections, transaction);
      // A new destination, or an audience turning active, syncs without waiting for a membership change (SPEC 10.3).
      if (saved.status === 'active' && (connectionsChanged || changed.includes('status'))) await this.syncLater(id, transaction);
      return toAudienceDetailDto(
        saved,
        [...next.connections].sort((a, b) => a - b),
        await this.destinations.forAudience(id, transaction),
      );
    });
  }

  /** 409 while a signal still points at the audience: deleting it would silently rewire them. */
  async delete(id: number): Promise<void> {
    await this.write(async (transaction) => {
      await this.audiences.getById(id, { transaction, lock: true });
      const signals = await this.audiences.signalCount(id, transaction);
      if (signals > 0) throw ApiError.conflict(`This audience is used by ${signals} signal(s); remove it from them first.`);
      await this.audiences.deleteWithMembers(id, transaction);
    });
  }

  /** The members follow the audience's inputs (SPEC 10.2): a recompute, debounced, in the write's transaction. */
  private async recomputeLater(audienceId: number, transaction: Transaction): Promise<void> {
    const customerId = this.tenants.current().customerId;
    await this.jobs.enqueue(transaction, JOBS.membershipRecompute, { customerId, audienceId }, { key: `${customerId}:${audienceId}` });
  }

  /** The audience's destinations get a sync (SPEC 10.3), debounced per audience; one with nothing to send makes no run. */
  private async syncLater(audienceId: number, transaction: Transaction): Promise<void> {
    const customerId = this.tenants.current().customerId;
    await this.jobs.enqueue(transaction, JOBS.syncMembershipChanged, { customerId, audienceId }, { key: `${customerId}:${audienceId}` });
  }

  private checkTransition(from: Audience['status'], to: Audience['status']): void {
    const error = audienceTransitionError(from, to);
    if (error) throw ApiError.field('status', error);
  }

  /**
   * Cross-field rules and references, all reported together. A PATCH (`previous` set) looks up
   * only the references it changes: the others were checked when they were written, and a deleted
   * one is held by its foreign key. Another workspace's id reads exactly like a missing one.
   */
  private async validate(
    state: AudienceState,
    previous: Audience | undefined,
    previousConnections: number[] | undefined,
    transaction: Transaction,
  ): Promise<void> {
    const errors: FieldErrors = {};
    // The grammar again on the merged object: an audience saved before it cannot be saved until its rules follow it.
    for (const [path, messages] of Object.entries(rulesErrors(state.rules))) errors[path === '' ? 'rules' : `rules.${path}`] = messages;
    if (state.sourceType === 'model' && state.modelInstanceId === null) errors.model_instance = [MODEL_INSTANCE_REQUIRED];
    if (state.sourceType !== 'model' && state.minScore !== null) errors.min_score = [MIN_SCORE_ONLY_FOR_MODEL];
    if (
      state.modelInstanceId !== null &&
      state.modelInstanceId !== previous?.modelInstanceId &&
      !(await this.models.existingIds([state.modelInstanceId], transaction)).has(state.modelInstanceId)
    ) {
      errors.model_instance = [MESSAGES.doesNotExist(state.modelInstanceId)];
    }
    const linked = new Set(previousConnections);
    const added = state.connections.filter((connectionId) => !linked.has(connectionId));
    if (added.length > 0) {
      const existing = await this.connections.existingIds(added, transaction);
      const missing = added.filter((connectionId) => !existing.has(connectionId));
      if (missing.length > 0) errors.connections = missing.map((connectionId) => MESSAGES.doesNotExist(connectionId));
    }
    if (state.name !== previous?.name && (await this.audiences.nameTaken(state.name, previous?.id, transaction)))
      errors.name = [NAME_TAKEN];
    if (Object.keys(errors).length > 0) throw ApiError.validation(errors);
  }

  /** One transaction per write; constraint races become the same 400s the checks give. */
  private async write<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    try {
      return await this.transactions.run(work);
    } catch (error) {
      if (isUniqueViolation(error, 'audiences_customer_name_lower_key')) throw ApiError.field('name', NAME_TAKEN);
      if (isForeignKeyViolation(error)) {
        const constraint = constraintOf(error);
        if (constraint === 'audiences_model_instance_fkey')
          throw ApiError.field('model_instance', 'The AI model instance no longer exists.');
        if (constraint === 'audience_connections_connection_fkey') throw ApiError.field('connections', 'A connection no longer exists.');
        if (constraint === 'signals_audience_fkey')
          throw ApiError.conflict('This audience is used by a signal; remove it from the signal first.');
      }
      throw error;
    }
  }
}

type AudienceState = StateOf<Audience, typeof AUDIENCE_FIELDS> & { connections: number[] };

function sameIds(a: number[], b: number[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((id) => set.has(id));
}
