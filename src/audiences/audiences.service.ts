import { isDeepStrictEqual } from 'node:util';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AiModelInstancesRepository } from '../ai-model-instances/ai-model-instances.repository.js';
import { ApiError, type FieldErrors } from '../common/errors/api-error.js';
import { constraintOf, isForeignKeyViolation, isUniqueViolation } from '../common/errors/database-errors.js';
import type { Page, PageRequest } from '../common/pagination/pagination.js';
import { pageOf } from '../common/pagination/pagination.js';
import { MESSAGES } from '../common/validation/fields.js';
import { ConnectionsRepository } from '../connections/connections.repository.js';
import { toAudienceDto } from './audience.mapper.js';
import { audienceTransitionError } from './audience-status.js';
import { Audience } from './audience.entity.js';
import { type AudienceFilters, AudiencesRepository } from './audiences.repository.js';
import type { AudienceDto, CreateAudienceDto, UpdateAudienceDto } from './dto/audience.dto.js';
import { Transactions } from '../database/transactions.js';

const NAME_TAKEN = 'An audience with this name already exists.';

/** The rules of SPEC section 3 for audiences, shared by the REST controller and the MCP tools. */
@Injectable()
export class AudiencesService {
  constructor(
    private readonly transactions: Transactions,
    private readonly audiences: AudiencesRepository,
    private readonly models: AiModelInstancesRepository,
    private readonly connections: ConnectionsRepository,
  ) {}

  async list(filters: AudienceFilters, request: PageRequest, url: URL): Promise<Page<AudienceDto>> {
    return pageOf(await this.audiences.list(filters, request), request, url, (row) => toAudienceDto(row, row.connectionIds));
  }

  async get(id: number): Promise<AudienceDto> {
    return this.present(await this.audiences.getById(id));
  }

  async create(input: CreateAudienceDto): Promise<AudienceDto> {
    if (input.status !== undefined) this.checkTransition('draft', input.status);
    const state: AudienceState = {
      name: input.name,
      description: input.description ?? '',
      sourceType: input.source_type,
      rules: input.rules ?? {},
      modelInstanceId: input.model_instance ?? null,
      minScore: input.min_score ?? null,
      status: input.status ?? 'draft',
      connections: input.connections ?? [],
    };
    return this.write(async (manager) => {
      await this.validate(state, undefined, manager);
      const audience = await this.audiences.insert(
        {
          name: state.name,
          description: state.description,
          sourceType: state.sourceType,
          rules: state.rules,
          modelInstanceId: state.modelInstanceId,
          minScore: state.minScore,
          status: state.status,
        },
        manager,
      );
      await this.audiences.replaceConnections(audience.id, state.connections, manager);
      return toAudienceDto(
        audience,
        [...state.connections].sort((a, b) => a - b),
      );
    });
  }

  /**
   * PATCH: the merged state is validated as a whole. An archived audience is read-only: a change
   * is a 400, a PATCH that changes nothing is a 200 (SPEC section 3).
   */
  async update(id: number, input: UpdateAudienceDto): Promise<AudienceDto> {
    return this.write(async (manager) => {
      const audience = await this.audiences.getById(id, { manager, lock: true });
      const currentConnections = (await this.audiences.connectionIds([id], manager)).get(id) ?? [];
      const next: AudienceState = {
        name: input.name ?? audience.name,
        description: input.description ?? audience.description,
        sourceType: input.source_type ?? audience.sourceType,
        rules: input.rules ?? audience.rules,
        modelInstanceId: input.model_instance !== undefined ? input.model_instance : audience.modelInstanceId,
        minScore: input.min_score !== undefined ? input.min_score : audience.minScore,
        status: input.status ?? audience.status,
        connections: input.connections ?? currentConnections,
      };
      const connectionsChanged = !sameIds(next.connections, currentConnections);
      const changed = connectionsChanged || changedFields(audience, next).length > 0;
      if (!changed) return toAudienceDto(audience, currentConnections);
      if (audience.status === 'archived') throw ApiError.field('status', 'This audience is archived and cannot be changed.');
      this.checkTransition(audience.status, next.status);
      await this.validate(next, id, manager);

      Object.assign(audience, {
        name: next.name,
        description: next.description,
        sourceType: next.sourceType,
        rules: next.rules,
        modelInstanceId: next.modelInstanceId,
        minScore: next.minScore,
        status: next.status,
      });
      const saved = await this.audiences.save(audience, manager);
      if (connectionsChanged) await this.audiences.replaceConnections(id, next.connections, manager);
      return toAudienceDto(
        saved,
        [...next.connections].sort((a, b) => a - b),
      );
    });
  }

  /** 409 while a signal still points at the audience: deleting it would silently rewire them. */
  async delete(id: number): Promise<void> {
    await this.write(async (manager) => {
      await this.audiences.getById(id, { manager, lock: true });
      const signals = await this.audiences.signalCount(id, manager);
      if (signals > 0) throw ApiError.conflict(`This audience is used by ${signals} signal(s); remove it from them first.`);
      await this.audiences.delete(id, manager);
    });
  }

  private async present(audience: Audience): Promise<AudienceDto> {
    const links = await this.audiences.connectionIds([audience.id]);
    return toAudienceDto(audience, links.get(audience.id) ?? []);
  }

  private checkTransition(from: Audience['status'], to: Audience['status']): void {
    const error = audienceTransitionError(from, to);
    if (error) throw ApiError.field('status', error);
  }

  /** Cross-field rules and references, all reported together. Another workspace's id reads exactly like a missing one. */
  private async validate(state: AudienceState, id: number | undefined, manager: EntityManager): Promise<void> {
    const errors: FieldErrors = {};
    if (state.sourceType === 'model' && state.modelInstanceId === null)
      errors.model_instance = ['This field is required when source_type is "model".'];
    if (state.sourceType !== 'model' && state.minScore !== null) errors.min_score = ['Only allowed when source_type is "model".'];
    if (state.modelInstanceId !== null && !(await this.models.existingIds([state.modelInstanceId], manager)).has(state.modelInstanceId)) {
      errors.model_instance = [MESSAGES.doesNotExist(state.modelInstanceId)];
    }
    if (state.connections.length > 0) {
      const existing = await this.connections.existingIds(state.connections, manager);
      const missing = state.connections.filter((connectionId) => !existing.has(connectionId));
      if (missing.length > 0) errors.connections = missing.map((connectionId) => MESSAGES.doesNotExist(connectionId));
    }
    if (await this.audiences.nameTaken(state.name, id, manager)) errors.name = [NAME_TAKEN];
    if (Object.keys(errors).length > 0) throw ApiError.validation(errors);
  }

  /** One transaction per write; constraint races become the same 400s the checks give. */
  private async write<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
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

interface AudienceState {
  name: string;
  description: string;
  sourceType: Audience['sourceType'];
  rules: Record<string, unknown>;
  modelInstanceId: number | null;
  minScore: number | null;
  status: Audience['status'];
  connections: number[];
}

function changedFields(audience: Audience, next: AudienceState): string[] {
  const changed: string[] = [];
  if (audience.name !== next.name) changed.push('name');
  if (audience.description !== next.description) changed.push('description');
  if (audience.sourceType !== next.sourceType) changed.push('source_type');
  if (!isDeepStrictEqual(audience.rules, next.rules)) changed.push('rules');
  if (audience.modelInstanceId !== next.modelInstanceId) changed.push('model_instance');
  if (audience.minScore !== next.minScore) changed.push('min_score');
  if (audience.status !== next.status) changed.push('status');
  return changed;
}

function sameIds(a: number[], b: number[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((id) => set.has(id));
}
