import { type DataSource, type EntityManager, type EntityTarget, type ObjectLiteral, type SelectQueryBuilder } from 'typeorm';
import { type Ordering, offsetOf, type PageRequest } from '../pagination/pagination.js';
import type { Tenant } from './tenant.js';
import type { TenantEntity } from './tenant-entity.js';

/** A list query that is exactly "the tenant's rows" or "the tenant's rows with this status". */
export interface CountedFilter {
  tenant: Tenant;
  status?: string | number;
}

/** API ordering fields mapped to entity property names. */
export type OrderingColumns = Record<string, string>;

/** SPEC section 4: `ordering` over id, name, created_at, updated_at, status. */
export const ORDERING_FIELDS = ['id', 'name', 'created_at', 'updated_at', 'status'] as const;
export const DEFAULT_ORDERING_COLUMNS: OrderingColumns = {
  id: 'id',
  name: 'name',
  created_at: 'createdAt',
  updated_at: 'updatedAt',
  status: 'status',
};

/**
 * The only way resource code reaches a tenant table. Every read, update and delete is narrowed to
 * `customer_id = tenant` and every insert stamps it, so no method can be called without the tenant
 * (the Tenant parameter is required) and none can forget the filter (it is added here, once).
 */
export class TenantRepository<E extends TenantEntity & ObjectLiteral> {
  constructor(
    private readonly dataSource: DataSource,
    private readonly entity: EntityTarget<E>,
    private readonly alias: string,
  ) {}

  /** A query builder already narrowed to the tenant; add conditions with andWhere only. */
  query(tenant: Tenant, manager: EntityManager = this.dataSource.manager): SelectQueryBuilder<E> {
    return manager
      .createQueryBuilder(this.entity, this.alias)
      .where(`${this.alias}.customerId = :tenantCustomerId`, { tenantCustomerId: tenant.customerId });
  }

  /** One object by id, or null; `FOR UPDATE` when a transaction is about to change it. */
  async findById(tenant: Tenant, id: number, options: { manager?: EntityManager; lock?: boolean } = {}): Promise<E | null> {
    const query = this.query(tenant, options.manager).andWhere(`${this.alias}.id = :id`, { id });
    if (options.lock) query.setLock('pessimistic_write');
    return query.getOne();
  }

  /** The ids among `ids` that exist in the tenant: for validating references. */
  async existingIds(tenant: Tenant, ids: number[], manager?: EntityManager): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = await this.query(tenant, manager)
      .select(`${this.alias}.id`, 'id')
      .andWhere(`${this.alias}.id IN (:...ids)`, { ids })
      .getRawMany<{ id: number }>();
    return new Set(rows.map((row) => Number(row.id)));
  }

  /**
   * A page of a filtered query plus the total count of the filter. When the query is the tenant's
   * whole table or one status of it (`counted`), the count comes from the trigger-maintained
   * tenant_counts table (one primary-key read) instead of COUNT(*) over every row.
   */
  async page(
    query: SelectQueryBuilder<E>,
    request: PageRequest,
    columns: OrderingColumns = DEFAULT_ORDERING_COLUMNS,
    counted?: CountedFilter,
  ): Promise<{ rows: E[]; count: number }> {
    const count = counted ? await this.countedRows(counted) : await query.clone().getCount();
    if (count === 0 || offsetOf(request) >= count) return { rows: [], count };
    const rows = await this.ordered(query, request.ordering, columns).offset(offsetOf(request)).limit(request.pageSize).getMany();
    return { rows, count };
  }

  async insert(
    tenant: Tenant,
    values: Omit<Partial<E>, 'customerId' | 'id'>,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<E> {
    const repository = manager.getRepository(this.entity);
    const created = repository.create({ ...values, customerId: tenant.customerId } as E);
    return repository.save(created);
  }

  /** Saves changes to an object loaded through this repository (its customer_id is the tenant's). */
  async save(tenant: Tenant, object: E, manager: EntityManager = this.dataSource.manager): Promise<E> {
    if (object.customerId !== tenant.customerId) throw new Error('Refusing to save an object of another tenant');
    return manager.getRepository(this.entity).save(object);
  }

  async delete(tenant: Tenant, id: number, manager: EntityManager = this.dataSource.manager): Promise<boolean> {
    const result = await manager
      .createQueryBuilder()
      .delete()
      .from(this.entity)
      .where('customer_id = :tenantCustomerId AND id = :id', { tenantCustomerId: tenant.customerId, id })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  private async countedRows({ tenant, status }: CountedFilter): Promise<number> {
    const table = this.dataSource.getMetadata(this.entity).tableName;
    const rows: { count: string | null }[] =
      status === undefined
        ? await this.dataSource.query('SELECT sum(count) AS count FROM tenant_counts WHERE customer_id = $1 AND resource = $2', [
            tenant.customerId,
            table,
          ])
        : await this.dataSource.query(
            'SELECT sum(count) AS count FROM tenant_counts WHERE customer_id = $1 AND resource = $2 AND status = $3',
            [tenant.customerId, table, String(status)],
          );
    return Number(rows[0]?.count ?? 0);
  }

  /** Orders by the requested column, then by id so pages are stable when values tie. */
  private ordered(query: SelectQueryBuilder<E>, ordering: Ordering, columns: OrderingColumns): SelectQueryBuilder<E> {
    const column = columns[ordering.field];
    if (column === undefined) throw new Error(`Ordering field ${ordering.field} is not mapped`);
    const ordered = query.orderBy(`${this.alias}.${column}`, ordering.direction);
    return column === 'id' ? ordered : ordered.addOrderBy(`${this.alias}.id`, ordering.direction);
  }
}
