import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { PageRequest } from '../common/pagination/pagination.js';
import type { Tenant } from '../common/tenancy/tenant.js';
import { type ListCondition, TenantRepository } from '../common/tenancy/tenant-repository.js';
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

/** An audience as a list page returns it, with its destination connection ids. */
export type AudienceRow = Audience & { connectionIds: number[] };

/** All SQL about audiences and their destination links. */
@Injectable()
export class AudiencesRepository extends TenantRepository<Audience> {
  constructor(private readonly database: DataSource) {
    super(database, Audience, 'audience');
  }

  /** A page of audiences, each with its destination connection ids (`connectionIds`), in one statement. */
  list(tenant: Tenant, filters: AudienceFilters, request: PageRequest) {
    // Another workspace's `?customer=` can match nothing (SPEC section 1).
    if (filters.customerId !== undefined && filters.customerId !== tenant.customerId)
      return Promise.resolve({ rows: [] as AudienceRow[], count: 0 });
    const conditions: ListCondition[] = [];
    if (filters.status !== undefined) conditions.push({ property: 'status', operator: '=', value: filters.status });
    if (filters.sourceType !== undefined) conditions.push({ property: 'sourceType', operator: '=', value: filters.sourceType });
    if (filters.search !== undefined) conditions.push({ property: 'name', operator: 'ILIKE', value: filters.search });
    const statusOnly = filters.sourceType === undefined && filters.search === undefined;
    return this.listPage(tenant, conditions, request, {
      counted: statusOnly ? { tenant, status: filters.status } : undefined,
      extra: {
        connectionIds:
          'ARRAY(SELECT link.connection_id FROM audience_connections link WHERE link.customer_id = t.customer_id AND link.audience_id = t.id ORDER BY link.connection_id)',
      },
    }) as Promise<{ rows: AudienceRow[]; count: number }>;
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
