import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import { isForeignKeyViolation } from '../common/errors/database-errors.js';
import type { Page } from '../common/pagination/pagination.js';
import { pageOf } from '../common/pagination/pagination.js';
import { toAiModelInstanceDto } from './ai-model-instance.mapper.js';
import type { AiModelInstance, ModelStatus } from './ai-model-instance.entity.js';
import { assignFields, changedFields, createdState, mergedState } from '../common/validation/field-table.js';
import { AiModelInstancesRepository, type AiModelInstanceUsage } from './ai-model-instances.repository.js';
import type { ListAiModelInstancesQuery } from './dto/list-ai-model-instances.query.js';
import {
  type AiModelInstanceDto,
  type CreateAiModelInstanceDto,
  MODEL_FIELDS,
  type UpdateAiModelInstanceDto,
} from './dto/ai-model-instance.dto.js';
import { modelTransitionError, startsTraining } from './model-status.js';
import { Transactions, type Transaction } from '../common/tenancy/transactions.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { JOBS } from '../jobs/job-definitions.js';
import { Jobs } from '../jobs/jobs.service.js';

/** The foreign keys that point at an instance: hitting one on delete means it is still in use. */
const REFERENCING_CONSTRAINTS = ['audiences_model_instance_fkey', 'signals_model_instance_fkey'];

/** The rules of SPEC section 3 for AI model instances, shared by the REST controller and the MCP tools. */
@Injectable()
export class AiModelInstancesService {
  constructor(
    private readonly transactions: Transactions,
    private readonly models: AiModelInstancesRepository,
    private readonly jobs: Jobs,
    private readonly tenants: TenantContext,
  ) {}

  async list(query: ListAiModelInstancesQuery, url: URL): Promise<Page<AiModelInstanceDto>> {
    return pageOf(await this.models.list(query, query.page), query.page, url, toAiModelInstanceDto);
  }

  async get(id: number): Promise<AiModelInstanceDto> {
    return toAiModelInstanceDto(await this.models.getById(id));
  }

  /** A new instance starts `pending`, or directly in a status reachable from it (training counts as run 1). */
  async create(input: CreateAiModelInstanceDto): Promise<AiModelInstanceDto> {
    const status = input.status ?? 'pending';
    checkTransition('pending', status);
    return this.write(async (transaction) => {
      const model = await this.models.insert(
        { ...createdState<AiModelInstance, typeof MODEL_FIELDS>(MODEL_FIELDS, input), version: startsTraining('pending', status) ? 1 : 0 },
        transaction,
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
    return this.write(async (transaction) => {
      const model = await this.models.getById(id, { transaction, lock: true });
      const next = mergedState<AiModelInstance, typeof MODEL_FIELDS>(MODEL_FIELDS, model, input);
      if (changedFields<AiModelInstance, typeof MODEL_FIELDS>(MODEL_FIELDS, model, next).length === 0) return toAiModelInstanceDto(model);
      if (model.status === 'archived') throw ApiError.field('status', 'This AI model instance is archived and cannot be changed.');
      checkTransition(model.status, next.status);

      const version = model.version + (startsTraining(model.status, next.status) ? 1 : 0);
      const turnsReady = model.status !== 'ready' && next.status === 'ready';
      assignFields<AiModelInstance, typeof MODEL_FIELDS>(MODEL_FIELDS, model, next);
      model.version = version;
      const saved = await this.models.save(model, transaction);
      // SPEC 10.2: a model turning ready gives its audiences the scores of its new version.
      if (turnsReady) {
        const customerId = this.tenants.current().customerId;
        await this.jobs.enqueue(
          transaction,
          JOBS.membershipModelChanged,
          { customerId, modelInstanceId: id },
          { key: `${customerId}:${id}` },
        );
      }
      return toAiModelInstanceDto(saved);
    });
  }

  /**
   * 409 while an audience or a signal still uses the instance: deleting it would leave them
   * pointing at nothing. The row lock makes a concurrent reference wait for us, and the foreign
   * keys catch one that slipped in before the lock (see `write`).
   */
  async delete(id: number): Promise<void> {
    await this.write(async (transaction) => {
      await this.models.getById(id, { transaction, lock: true });
      const usage = await this.models.usage(id, transaction);
      if (usage.audiences > 0 || usage.signals > 0) throw inUse(usage);
      await this.models.delete(id, transaction);
    });
  }

  /** One transaction per write; a reference that raced the usage check becomes the same 409. */
  private async write<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    try {
      return await this.transactions.run(work);
    } catch (error) {
      if (REFERENCING_CONSTRAINTS.some((constraint) => isForeignKeyViolation(error, constraint))) throw inUse();
      throw error;
    }
  }
}

function checkTransition(from: ModelStatus, to: ModelStatus): void {
  const error = modelTransitionError(from, to);
  if (error) throw ApiError.field('status', error);
}

/** Without counts when a foreign key caught the reference: the counts then come from another transaction's view. */
function inUse(usage?: AiModelInstanceUsage): ApiError {
  if (!usage) return ApiError.conflict('This AI model instance is used by an audience or a signal; remove it from them first.');
  return ApiError.conflict(
    `This AI model instance is used by ${usage.audiences} audience(s) and ${usage.signals} signal(s); remove it from them first.`,
  );
}
