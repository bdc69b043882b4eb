import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import type { PageRequest } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type ListCondition, type ListResult, TenantRepository } from '../common/tenancy/tenant-repository.js';
import { AudienceConnection } from './audience-connection.entity.js';
import { Audience } from './audience.entity.js';
import type { ListAudiencesQuery } from './dto/list-audiences.query.js';
import type { Transaction } from '../common/tenancy/transactions.js';

/** An audience as a list page returns it, with its destination connection ids. */
export type AudienceRow = Audience & { connectionIds: number[] };

/** All SQL about audiences and their destination links. */
@Injectable()
export class AudiencesRepository extends TenantRepository<Audience> {
  constructor(@InjectRepository(Audience) audiences: Repository<Audience>, tenants: TenantContext) {
    super(audiences, tenants, 'audience');
  }

  /** A page of audiences, each with its destination connection ids (`connectionIds`), in one statement. */
  list(filters: ListAudiencesQuery, request: PageRequest): Promise<ListResult<AudienceRow>> {
    // Another workspace's `?customer=` can match nothing (SPEC section 1).
    if (filters.customer !== undefined && filters.customer !== this.tenant.customerId) return Promise.resolve({ rows: [], count: 0 });
    const conditions: ListCondition<Audience>[] = [];
    if (filters.status !== undefined) conditions.push({ property: 'status', operator: '=', value: filters.status });
    if (filters.source_type !== undefined) conditions.push({ property: 'sourceType', operator: '=', value: filters.source_type });
    if (filters.model_instance !== undefined)
      conditions.push({ property: 'modelInstanceId', operator: '=', value: filters.model_instance });
    if (filters.search !== undefined) conditions.push({ property: 'name', operator: 'ILIKE', value: filters.search });
    return this.listPage<AudienceRow>(conditions, request, { linkedIds: AUDIENCE_CONNECTION_IDS });
  }

  /** Another audience of the tenant with this name in any letter case (served by the unique lower(name) index). */
  async nameTaken(name: string, exceptId: number | undefined, transaction?: Transaction): Promise<boolean> {
    const query = this.query(transaction).andWhere('lower(audience.name) = lower(:name)', { name });
    if (exceptId !== undefined) query.andWhere('audience.id <> :exceptId', { exceptId });
    return (await query.getCount()) > 0;
  }

  /** Destination connection ids per audience, for a whole page in one query. */
  async connectionIds(audienceIds: number[], transaction?: Transaction): Promise<Map<number, number[]>> {
    const byAudience = new Map<number, number[]>(audienceIds.map((id) => [id, []]));
    if (audienceIds.length === 0) return byAudience;
    // Plain SQL like the page and by-id statements: the detail path runs this on every request.
    const { rows: links } = await this.tenantQuery<{ audienceId: number; connectionId: number }>(
      'SELECT audience_id AS "audienceId", connection_id AS "connectionId" FROM audience_connections WHERE customer_id = $1 AND audience_id = ANY($2) ORDER BY connection_id',
      [audienceIds],
      transaction,
    );
    for (const link of links) byAudience.get(link.audienceId)?.push(link.connectionId);
    return byAudience;
  }

  async replaceConnections(audienceId: number, connectionIds: number[], transaction: Transaction): Promise<void> {
    await this.tenantQuery('DELETE FROM audience_connections WHERE customer_id = $1 AND audience_id = $2', [audienceId], transaction);
    await this.addConnections(audienceId, connectionIds, transaction);
  }

  async addConnections(audienceId: number, connectionIds: number[], transaction: Transaction): Promise<void> {
    if (connectionIds.length === 0) return;
    await this.tenantQuery(
      'INSERT INTO audience_connections (customer_id, audience_id, connection_id) SELECT $1, $2, unnest($3::bigint[])',
      [audienceId, connectionIds],
      transaction,
    );
  }

  /** Deletes the audience and its members (which have no foreign key to cascade, see AudienceMember). */
  async deleteWithMembers(audienceId: number, transaction: Transaction): Promise<void> {
    await this.tenantQuery('DELETE FROM audience_members WHERE customer_id = $1 AND audience_id = $2', [audienceId], transaction);
    await this.delete(audienceId, transaction);
  }

  /** How many signals point at the audience (a delete is then a 409). */
  async signalCount(audienceId: number, transaction?: Transaction): Promise<number> {
    const { rows } = await this.tenantQuery<{ count: string }>(
      'SELECT count(*) AS count FROM signals WHERE customer_id = $1 AND audience_id = $2',
      [audienceId],
      transaction,
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
