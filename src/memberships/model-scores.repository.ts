import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { AiModelInstance } from '../ai-model-instances/ai-model-instance.entity.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { TenantRepository } from '../common/tenancy/tenant-repository.js';
import type { Transaction } from '../common/tenancy/transactions.js';

/** All SQL about model scores (SPEC 10.2), part of the model instance's aggregate. */
@Injectable()
export class ModelScoresRepository extends TenantRepository<AiModelInstance> {
  constructor(@InjectRepository(AiModelInstance) models: Repository<AiModelInstance>, tenants: TenantContext) {
    super(models, tenants, 'model');
  }

  /**
   * Writes each person's latest score for the model's `version` in one statement (rows travel as
   * one JSON parameter, one external id each), and answers the external ids that name nobody.
   */
  async write(
    modelInstanceId: number,
    version: number,
    scores: { external_id: string; score: number }[],
    transaction: Transaction,
  ): Promise<{ written: number; unknown: string[] }> {
    const { rows } = await this.tenantQuery<{ written: string; unknown: string[] }>(
      `WITH given AS (SELECT r.external_id, r.score FROM jsonb_to_recordset($4::jsonb) AS r(external_id text, score double precision)),
       matched AS (SELECT p.id, g.score FROM given g JOIN people p ON p.customer_id = $1 AND p.external_id = g.external_id),
       written AS (
         INSERT INTO model_scores (customer_id, model_instance_id, person_id, version, score)
         SELECT $1, $2, m.id, $3, m.score FROM matched m ORDER BY m.id
         ON CONFLICT (customer_id, model_instance_id, person_id)
           DO UPDATE SET version = EXCLUDED.version, score = EXCLUDED.score, scored_at = now()
         RETURNING 1)
       SELECT (SELECT count(*) FROM written) AS written,
              ARRAY(SELECT g.external_id FROM given g WHERE NOT EXISTS (
                SELECT 1 FROM people p WHERE p.customer_id = $1 AND p.external_id = g.external_id)) AS unknown`,
      [modelInstanceId, version, JSON.stringify(scores)],
      transaction,
    );
    return { written: Number(rows[0]!.written), unknown: rows[0]!.unknown };
  }
}
