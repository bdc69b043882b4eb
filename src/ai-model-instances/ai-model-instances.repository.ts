import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { PageRequest } from '../common/pagination/pagination.js';
import type { Tenant } from '../common/tenancy/tenant.js';
import { type ListCondition, TenantRepository } from '../common/tenancy/tenant-repository.js';
import { AiModelInstance, type ModelStatus, type ModelType } from './ai-model-instance.entity.js';

export interface AiModelInstanceFilters {
  status?: ModelStatus;
  modelType?: ModelType;
  /** A LIKE pattern, already escaped. */
  search?: string;
}

/** What still points at an instance: a delete is refused while either is non-zero. */
export interface AiModelInstanceUsage {
  audiences: number;
  signals: number;
}

/** All SQL about AI model instances. */
@Injectable()
export class AiModelInstancesRepository extends TenantRepository<AiModelInstance> {
  constructor(private readonly database: DataSource) {
    super(database, AiModelInstance, 'model');
  }

  list(tenant: Tenant, filters: AiModelInstanceFilters, request: PageRequest) {
    const conditions: ListCondition[] = [];
    if (filters.status !== undefined) conditions.push({ property: 'status', operator: '=', value: filters.status });
    if (filters.modelType !== undefined) conditions.push({ property: 'modelType', operator: '=', value: filters.modelType });
    if (filters.search !== undefined) conditions.push({ property: 'name', operator: 'ILIKE', value: filters.search });
    const statusOnly = filters.modelType === undefined && filters.search === undefined;
    return this.listPage(tenant, conditions, request, { counted: statusOnly ? { tenant, status: filters.status } : undefined });
  }

  /** Audiences and signals of the tenant that reference the instance (both served by their (customer_id, model_instance_id) indexes). */
  async usage(tenant: Tenant, id: number, manager: EntityManager = this.database.manager): Promise<AiModelInstanceUsage> {
    const rows: { audiences: string; signals: string }[] = await manager.query(
      `SELECT
         (SELECT count(*) FROM audiences WHERE customer_id = $1 AND model_instance_id = $2) AS audiences,
         (SELECT count(*) FROM signals WHERE customer_id = $1 AND model_instance_id = $2) AS signals`,
      [tenant.customerId, id],
    );
    return { audiences: Number(rows[0]?.audiences ?? 0), signals: Number(rows[0]?.signals ?? 0) };
  }
}
