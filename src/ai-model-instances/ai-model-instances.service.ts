import { isDeepStrictEqual } from 'node:util';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../common/errors/api-error.js';
import { isForeignKeyViolation } from '../common/errors/database-errors.js';
import type { Page, PageRequest } from '../common/pagination/pagination.js';
import { pageOf } from '../common/pagination/pagination.js';
import { toAiModelInstanceDto } from './ai-model-instance.mapper.js';
import type { AiModelInstance, ModelStatus } from './ai-model-instance.entity.js';
import { type AiModelInstanceFilters, AiModelInstancesRepository, type AiModelInstanceUsage } from './ai-model-instances.repository.js';
import type { AiModelInstanceDto, CreateAiModelInstanceDto, UpdateAiModelInstanceDto } from './dto/ai-model-instance.dto.js';
import { modelTransitionError, startsTraining } from './model-status.js';
import { Transactions } from '../database/transactions.js';

/** The foreign keys that point at an instance: hitting one on delete means it is still in use. */
const REFERENCING_CONSTRAINTS = ['audiences_model_instance_fkey', 'signals_model_instance_fkey'];

/** The rules of SPEC section 3 for AI model instances, shared by the REST controller and the MCP tools. */
@Injectable()
export class AiModelInstancesService {
  constructor(
    private readonly transactions: Transactions,
    private readonly models: AiModelInstancesRepository,
  ) {}

  async list(filters: AiModelInstanceFilters, request: PageRequest, url: URL): Promise<Page<AiModelInstanceDto>> {
    return pageOf(await this.models.list(filters, request), request, url, toAiModelInstanceDto);
  }

  async get(id: number): Promise<AiModelInstanceDto> {
    return toAiModelInstanceDto(await this.models.getById(id));
  }

  /** A new instance starts `pending`, or directly in a status reachable from it (training counts as run 1). */
  async create(input: CreateAiModelInstanceDto): Promise<AiModelInstanceDto> {
    const status = input.status ?? 'pending';
    checkTransition('pending', status);
    return this.write(async (manager) => {
      const model = await this.models.insert(
        {
          name: input.name,
          modelType: input.model_type,
          baseModel: input.base_model,
          parameters: input.parameters ?? {},
          status,
          metrics: input.metrics ?? {},
          version: startsTraining('pending', status) ? 1 : 0,
        },
        manager,
      );
      return toAiModelInstanceDto(model);
    });
  }

  /**
   * PATCH: an archived instance is read-only: a change is a 400, a PATCH that changes nothing is
   * a 200 (SPEC section 3). The row is locked so concurrent PATCHes queue: each checks its
   * transition, and bumps `version`, against the status the previous one committed.
   */
  async update(id: number, input: UpdateAiModelInstanceDto): Promise<AiModelInstanceDto> {
    return this.write(async (manager) => {
      const model = await this.models.getById(id, { manager, lock: true });
      const next: ModelState = {
        name: input.name ?? model.name,
        modelType: input.model_type ?? model.modelType,
        baseModel: input.base_model ?? model.baseModel,
        parameters: input.parameters ?? model.parameters,
        status: input.status ?? model.status,
        metrics: input.metrics ?? model.metrics,
      };
      if (!hasChanges(model, next)) return toAiModelInstanceDto(model);
      if (model.status === 'archived') throw ApiError.field('status', 'This AI model instance is archived and cannot be changed.');
      checkTransition(model.status, next.status);

      const version = model.version + (startsTraining(model.status, next.status) ? 1 : 0);
      Object.assign(model, { ...next, version });
      return toAiModelInstanceDto(await this.models.save(model, manager));
    });
  }

  /**
   * 409 while an audience or a signal still uses the instance: deleting it would leave them
   * pointing at nothing. The row lock makes a concurrent reference wait for us, and the foreign
   * keys catch one that slipped in before the lock (see `write`).
   */
  async delete(id: number): Promise<void> {
    await this.write(async (manager) => {
      await this.models.getById(id, { manager, lock: true });
      const usage = await this.models.usage(id, manager);
      if (usage.audiences > 0 || usage.signals > 0) throw inUse(usage);
      await this.models.delete(id, manager);
    });
  }

  /** One transaction per write; a reference that raced the usage check becomes the same 409. */
  private async write<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    try {
      return await this.transactions.run(work);
    } catch (error) {
      if (REFERENCING_CONSTRAINTS.some((constraint) => isForeignKeyViolation(error, constraint))) throw inUse();
      throw error;
    }
  }
}

interface ModelState {
  name: string;
  modelType: AiModelInstance['modelType'];
  baseModel: string;
  parameters: Record<string, unknown>;
  status: ModelStatus;
  metrics: Record<string, unknown>;
}

function checkTransition(from: ModelStatus, to: ModelStatus): void {
  const error = modelTransitionError(from, to);
  if (error) throw ApiError.field('status', error);
}

function hasChanges(model: AiModelInstance, next: ModelState): boolean {
  return (
    model.name !== next.name ||
    model.modelType !== next.modelType ||
    model.baseModel !== next.baseModel ||
    !isDeepStrictEqual(model.parameters, next.parameters) ||
    model.status !== next.status ||
    !isDeepStrictEqual(model.metrics, next.metrics)
  );
}

/** Without counts when a foreign key caught the reference: the counts then come from another transaction's view. */
function inUse(usage?: AiModelInstanceUsage): ApiError {
  if (!usage) return ApiError.conflict('This AI model instance is used by an audience or a signal; remove it from them first.');
  return ApiError.conflict(
    `This AI model instance is used by ${usage.audiences} audience(s) and ${usage.signals} signal(s); remove it from them first.`,
  );
}
