import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import type { PageRequest } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type ListCondition, type ListResult, TenantRepository } from '../common/tenancy/tenant-repository.js';
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
  constructor(@InjectRepository(Audience) audiences: Repository<Audience>, tenants: TenantContext) {
    super(audiences, tenants, 'audience');
  }

  /** A page of audiences, each with its destination connection ids (`connectionIds`), in one statement. */
  list(filters: AudienceFilters, request: PageRequest): Promise<ListResult<AudienceRow>> {
    // Another workspace's `?customer=` can match nothing (SPEC section 1).
    if (filters.customerId !== undefined && filters.customerId !== this.tenant.customerId) return Promise.resolve({ rows: [], count: 0 });
    const conditions: ListCondition<Audience>[] = [];
    if (filters.status !== undefined) conditions.push({ property: 'status', operator: '=', value: filters.status });
    if (filters.sourceType !== undefined) conditions.push({ property: 'sourceType', operator: '=', value: filters.sourceType });
    if (filters.search !== undefined) conditions.push({ property: 'name', operator: 'ILIKE', value: filters.search });
    return this.listPage<AudienceRow>(conditions, request, { linkedIds: AUDIENCE_CONNECTION_IDS });
  }

  /** Another audience of the tenant with this name in any letter case (served by the unique lower(name) index). */
  async nameTaken(name: string, exceptId: number | undefined, manager?: EntityManager): Promise<boolean> {
    const query = this.query(manager).andWhere('lower(audience.name) = lower(:name)', { name });
    if (exceptId !== undefined) query.andWhere('audience.id <> :exceptId', { exceptId });
    return (await query.getCount()) > 0;
  }

  /** Destination connection ids per audience, for a whole page in one query. */
  async connectionIds(audienceIds: number[], manager?: EntityManager): Promise<Map<number, number[]>> {
    const byAudience = new Map<number, number[]>(audienceIds.map((id) => [id, []]));
    if (audienceIds.length === 0) return byAudience;
    // Plain SQL like the page and by-id statements: the detail path runs this on every request.
    const links: { audienceId: number; connectionId: number }[] = await this.managerOf(manager).query(
      'SELECT audience_id AS "audienceId", connection_id AS "connectionId" FROM audience_connections WHERE customer_id = $1 AND audience_id = ANY($2) ORDER BY connection_id',
      [this.tenant.customerId, audienceIds],
    );
    for (const link of links) byAudience.get(link.audienceId)?.push(link.connectionId);
    return byAudience;
  }

  async replaceConnections(audienceId: number, connectionIds: number[], manager: EntityManager): Promise<void> {
    const customerId = this.tenant.customerId;
    await manager.getRepository(AudienceConnection).delete({ customerId, audienceId });
    if (connectionIds.length > 0) {
      await manager
        .getRepository(AudienceConnection)
        .insert(connectionIds.map((connectionId) => ({ customerId, audienceId, connectionId })));
    }
  }

  /** How many signals point at the audience (a delete is then a 409). */
  async signalCount(audienceId: number, manager?: EntityManager): Promise<number> {
    const rows: { count: string }[] = await this.managerOf(manager).query(
      'SELECT count(*) AS count FROM signals WHERE customer_id = $1 AND audience_id = $2',
      [this.tenant.customerId, audienceId],
    );
    return Number(rows[0]?.count ?? 0);
  }
}

const AUDIENCE_CONNECTION_IDS = {
  as: 'connectionIds',
  entity: AudienceConnection,
  owner: 'audienceId',
  value: 'connectionId',
} as const;
