import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { PageRequest } from '../common/pagination/pagination.js';
import type { Tenant } from '../common/tenancy/tenant.js';
import { TenantRepository } from '../common/tenancy/tenant-repository.js';
import { AudienceConnection } from './audience-connection.entity.js';
import { Audience, type AudienceStatus, type SourceType } from './audience.entity.js';

export interface AudienceFilters {
  /** `?customer=`: anything but the caller's own workspace matches nothing. */
  customerId?: number;
  status?: AudienceStatus;
  sourceType?: SourceType;
  /** A LIKE pattern, already escaped. */
  search?: string;
}

/** All SQL about audiences and their destination links. */
@Injectable()
export class AudiencesRepository extends TenantRepository<Audience> {
  constructor(private readonly database: DataSource) {
    super(database, Audience, 'audience');
  }

  list(tenant: Tenant, filters: AudienceFilters, request: PageRequest) {
    const query = this.query(tenant);
    if (filters.customerId !== undefined)
      query.andWhere('audience.customerId = :filterCustomerId', { filterCustomerId: filters.customerId });
    if (filters.status !== undefined) query.andWhere('audience.status = :status', { status: filters.status });
    if (filters.sourceType !== undefined) query.andWhere('audience.sourceType = :sourceType', { sourceType: filters.sourceType });
    if (filters.search !== undefined) query.andWhere('audience.name ILIKE :search', { search: filters.search });
    const statusOnly =
      filters.sourceType === undefined && filters.search === undefined && (filters.customerId ?? tenant.customerId) === tenant.customerId;
    return this.page(query, request, undefined, statusOnly ? { tenant, status: filters.status } : undefined);
  }

  /** Another audience of the tenant with this name in any letter case (served by the unique lower(name) index). */
  async nameTaken(tenant: Tenant, name: string, exceptId: number | undefined, manager?: EntityManager): Promise<boolean> {
    const query = this.query(tenant, manager).andWhere('lower(audience.name) = lower(:name)', { name });
    if (exceptId !== undefined) query.andWhere('audience.id <> :exceptId', { exceptId });
    return (await query.getCount()) > 0;
  }

  /** Destination connection ids per audience, for a whole page in one query. */
  async connectionIds(
    tenant: Tenant,
    audienceIds: number[],
    manager: EntityManager = this.database.manager,
  ): Promise<Map<number, number[]>> {
    const byAudience = new Map<number, number[]>(audienceIds.map((id) => [id, []]));
    if (audienceIds.length === 0) return byAudience;
    const links = await manager
      .getRepository(AudienceConnection)
      .createQueryBuilder('link')
      .where('link.customerId = :customerId AND link.audienceId IN (:...audienceIds)', { customerId: tenant.customerId, audienceIds })
      .orderBy('link.connectionId', 'ASC')
      .getMany();
    for (const link of links) byAudience.get(link.audienceId)?.push(link.connectionId);
    return byAudience;
  }

  async replaceConnections(tenant: Tenant, audienceId: number, connectionIds: number[], manager: EntityManager): Promise<void> {
    await manager.getRepository(AudienceConnection).delete({ customerId: tenant.customerId, audienceId });
    if (connectionIds.length > 0) {
      await manager
        .getRepository(AudienceConnection)
        .insert(connectionIds.map((connectionId) => ({ customerId: tenant.customerId, audienceId, connectionId })));
    }
  }

  /** How many signals point at the audience (a delete is then a 409). */
  async signalCount(tenant: Tenant, audienceId: number, manager: EntityManager = this.database.manager): Promise<number> {
    const rows: { count: string }[] = await manager.query(
      'SELECT count(*) AS count FROM signals WHERE customer_id = $1 AND audience_id = $2',
      [tenant.customerId, audienceId],
    );
    return Number(rows[0]?.count ?? 0);
  }
}
