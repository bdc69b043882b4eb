import { Injectable } from '@nestjs/common';
import { AiModelInstancesRepository } from '../ai-model-instances/ai-model-instances.repository.js';
import { ApiError } from '../common/errors/api-error.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { Transactions } from '../common/tenancy/transactions.js';
import { JOBS } from '../jobs/job-definitions.js';
import { Jobs } from '../jobs/jobs.service.js';
import type { ScoresWrittenDto } from './dto/model-scores.dto.js';
import { ModelScoresRepository } from './model-scores.repository.js';

/** Model scores (SPEC 10.2): written by the training pipeline, read by model audiences. */
@Injectable()
export class ModelScoresService {
  constructor(
    private readonly transactions: Transactions,
    private readonly models: AiModelInstancesRepository,
    private readonly scores: ModelScoresRepository,
    private readonly jobs: Jobs,
    private readonly tenants: TenantContext,
  ) {}

  /**
   * Stores the scores under the model's current version, in one transaction with the recompute
   * of its audiences (debounced). A later entry for an external id wins over an earlier one.
   */
  async write(modelInstanceId: number, scores: { external_id: string; score: number }[]): Promise<ScoresWrittenDto> {
    const latest = new Map<string, number>();
    for (const { external_id: externalId, score } of scores) {
      latest.delete(externalId);
      latest.set(externalId, score);
    }
    return this.transactions.run(async (transaction) => {
      // Locked: a PATCH that starts retraining waits, so scores are never filed under a version that just ended.
      const model = await this.models.getById(modelInstanceId, { transaction, lock: true });
      if (model.status === 'archived') throw ApiError.conflict('This AI model instance is archived and takes no scores.');
      const outcome = await this.scores.write(
        model.id,
        model.version,
        [...latest].map(([externalId, score]) => ({ external_id: externalId, score })),
        transaction,
      );
      const customerId = this.tenants.current().customerId;
      if (outcome.written > 0)
        await this.jobs.enqueue(
          transaction,
          JOBS.membershipModelChanged,
          { customerId, modelInstanceId: model.id },
          { key: `${customerId}:${model.id}` },
        );
      return { written: outcome.written, unknown_external_ids: outcome.unknown };
    });
  }
}
