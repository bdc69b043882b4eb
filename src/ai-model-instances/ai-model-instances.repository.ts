import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import type { PageRequest } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type ListCondition, type ListResult, TenantRepository } from '../common/tenancy/tenant-repository.js';
import { AiModelInstance } from './ai-model-instance.entity.js';
import type { ListAiModelInstancesQuery } from './dto/list-ai-model-instances.query.js';
import type { Transaction } from '../common/tenancy/transactions.js';

/** What still points at an instance: a delete is refused while either is non-zero. */
export interface AiModelInstanceUsage {
  audiences: number;
  signals: number;
}

/** All SQL about AI model instances. */
@Injectable()
export class AiModelInstancesRepository extends TenantRepository<AiModelInstance> {
  constructor(@InjectRepository(AiModelInstance) models: Repository<AiModelInstance>, tenants: TenantContext) {
    super(models, tenants, 'model');
  }

  list(filters: ListAiModelInstancesQuery, request: PageRequest): Promise<ListResult<AiModelInstance>> {
    const conditions: ListCondition<AiModelInstance>[] = [];
    if (filters.status !== undefined) conditions.push({ property: 'status', operator: '=', value: filters.status });
    if (filters.model_type !== undefined) conditions.push({ property: 'modelType', operator: '=', value: filters.model_type });
    if (filters.search !== undefined) conditions.push({ property: 'name', operator: 'ILIKE', value: filters.search });
    return this.listPage(conditions, request);
  }

  /** Audiences and signals of the tenant that reference the instance (both served by their (customer_id, model_instance_id) indexes). */
  async usage(id: number, transaction?: Transaction): Promise<AiModelInstanceUsage> {
    const { rows } = await this.tenantQuery<{ audiences: string; signals: string }>(
      `SELECT
         (SELECT count(*) FROM audiences WHERE customer_id = $1 AND model_instance_id = $2) AS audiences,
         (SELECT count(*) FROM signals WHERE customer_id = $1 AND model_instance_id = $2) AS signals`,
      [id],
      transaction,
    );
    return { audiences: Number(rows[0]?.audiences ?? 0), signals: Number(rows[0]?.signals ?? 0) };
  }
}
