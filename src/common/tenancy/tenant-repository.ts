import type { EntityTarget, ObjectLiteral, Repository, SelectQueryBuilder } from 'typeorm';
import { EntityRepository } from './entity-repository.js';
import { prepared } from '../../database/prepared-statements.js';
import { ApiError } from '../errors/api-error.js';
import { DEFAULT_ORDERING_COLUMNS, offsetOf, type OrderingColumns, type PageRequest } from '../pagination/pagination.js';
import type { Tenant } from './tenant.js';
import type { TenantContext } from './tenant-context.js';
import type { TenantEntity } from './tenant-entity.js';
import { type Transaction } from './transactions.js';

/** One list filter: `column = value`, or `column ILIKE value` (an escaped pattern). Properties are code, never input. */
export interface ColumnCondition<E> {
  property: keyof E & string;
  operator: '=' | 'ILIKE';
  value: unknown;
}

/**
 * A link table of another feature, named by its SQL (code, never input): rows of `table` whose
 * `owner` column holds a listed row's id and `value` column the other side, in the same workspace.
 */
export interface LinkTable {
  table: string;
  owner: string;
  value: string;
}

/** Rows that have a link row with this value (e.g. people who are members of an audience). */
export interface LinkCondition {
  link: LinkTable;
  value: unknown;
}

export type ListCondition<E> = ColumnCondition<E> | LinkCondition;

/**
 * The ids of a link table's rows that point at each listed row, as one array column: e.g. an
 * audience's destination connection ids, read in the page query itself.
 */
export interface LinkedIds<L> {
  /** The property the ids appear under on each row. */
  as: string;
  entity: EntityTarget<L>;
  /** The link's property holding the listed row's id. */
  owner: keyof L & string;
  /** The link's property holding the ids to collect (ascending). */
  value: keyof L & string;
}

/**
 * A value read with each listed row by a correlated subquery on the row `t` (e.g. a signal's
 * delivery counts as one JSON object), so a page and what it shows of each row are one statement.
 * The subquery must narrow to `t.customer_id` itself; it is fixed text, never built from a request.
 */
export interface AttachedValue {
  /** The property the value appears under on each row. */
  as: string;
  /** A scalar subquery or expression over `t`. */
  select: string;
}

export interface ListOptions<E> {
  /** API ordering fields mapped to entity properties; default DEFAULT_ORDERING_COLUMNS. */
  columns?: OrderingColumns<E>;
  linkedIds?: LinkedIds<ObjectLiteral> | { as: string; link: LinkTable };
  attached?: AttachedValue;
}

/** Offsets from which a page first picks its ids on the index, then fetches only those rows. */
const DEFERRED_JOIN_FROM_OFFSET = 1000;

/** The column of a list statement that carries the total count on every row. */
const TOTAL = '__total';

/**
 * Tables whose rows per workspace and status are counted by triggers into `tenant_counts`
 * (migrations 1763750000000 and 1763760000000). A list filtered by nothing but status reads its
 * count there: 0.04 ms at 1M rows instead of 124 ms for COUNT(*).
 */
const COUNTED_TABLES = new Set(['audiences', 'signals', 'ai_model_instances', 'connections']);

/** A page of rows as read by `listPage`, with the total count of matching rows. */
export interface ListResult<R> {
  rows: R[];
  count: number;
}

/**
 * What `tenantQuery` requires of a statement: a `customer_id = $1` condition (any table alias), or
 * an INSERT whose first value is `$1` into a column list that starts with customer_id.
 */
const TENANT_PREDICATE = /(?:\b|")customer_id"? = \$1\b|^\s*INSERT INTO "?\w+"? \(customer_id,[^)]*\)\s*(?:VALUES \(|SELECT )\$1\b/;

/**
 * Statement texts that passed the TENANT_PREDICATE check, each with whether TypeORM answers it as
 * `[rows, rowCount]` (an UPDATE or DELETE): both decided once per text, not on every call.
 */
const checkedStatements = new Map<string, boolean>();
/**
 * Texts remembered at most: a few hundred are fixed, but a compiled audience rule is a text per
 * tree shape, so the memory is bounded (past it, it starts again; a check costs one regular expression).
 */
const MAX_CHECKED_STATEMENTS = 5000;

function refuseUnscopedWhere(): never {
  throw new Error('where()/orWhere() would replace or widen the tenant predicate; use andWhere()');
}

/**
 * The only way resource code reaches a tenant table. Every statement is narrowed to the workspace
 * of the current TenantContext (`customer_id = $1` first) and every insert stamps it; outside a
 * context each method throws. Subclasses hold the SQL of one aggregate (STYLE: one repository per
 * aggregate) and are built from the `Repository<E>` that TypeOrmModule.forFeature provides.
 */
export abstract class TenantRepository<E extends TenantEntity & ObjectLiteral> extends EntityRepository<E> {
  private readonly sqlCache = new Map<string, { sql: string; countedStatus: boolean }>();
  private byIdStatements: { read: string; forUpdate: string } | undefined;
  private readonly byIdWithStatements = new Map<string, string>();

  protected constructor(
    repository: Repository<E>,
    protected readonly tenants: TenantContext,
    private readonly alias: string,
  ) {
    super(repository);
  }

  protected get tenant(): Tenant {
    return this.tenants.current();
  }

  /**
   * A list page and its total count in one hand-written statement, the hot path of every list
   * (SPEC section 4). The statement is built once per filter shape, ordering and depth and
   * cached; rows come back with their columns aliased to entity property names, so mappers read
   * them like entities without TypeORM hydrating each one. `customer_id = $1` is always the first
   * condition. The count comes from `tenant_counts` whenever the filters allow it (nothing but
   * status), else from COUNT(*); it rides on every row (`__total`), and a page past the end is
   * one row of NULLs carrying it. One statement instead of a count and then a page saves a round
   * trip and the driver's per-query work on every list request. Deep pages pick the page's ids
   * on the index first (a deferred join), so the offset is walked on the index, not on whole rows.
   */
  protected async listPage<R extends E = E>(
    conditions: ListCondition<E>[],
    request: PageRequest,
    options: ListOptions<E> = {},
  ): Promise<ListResult<R>> {
    const offset = offsetOf(request);
    const { sql, countedStatus } = this.listSql(conditions, request, options, offset >= DEFERRED_JOIN_FROM_OFFSET);
    const parameters: unknown[] = [this.tenant.customerId];
    for (const condition of conditions) parameters.push(condition.value);
    parameters.push(request.pageSize, offset);
    if (countedStatus) parameters.push(String(conditions[0]!.value));
    const rows: (R & { [TOTAL]: string | number; id: number | null })[] = await this.repository.manager.query(sql, parameters);
    const first = rows[0];
    return { rows: first === undefined || first.id === null ? [] : rows, count: Number(first?.[TOTAL] ?? 0) };
  }

  /** The list statement for a filter shape, ordering and depth, cached; `countedStatus` when the status is a parameter of the count too. */
  private listSql(
    conditions: ListCondition<E>[],
    request: PageRequest,
    options: ListOptions<E>,
    deferred: boolean,
  ): { sql: string; countedStatus: boolean } {
    const orderProperty = (options.columns ?? (DEFAULT_ORDERING_COLUMNS as OrderingColumns<E>))[request.ordering.field];
    if (orderProperty === undefined) throw new Error(`Ordering field ${request.ordering.field} is not mapped`);
    const direction = request.ordering.direction;
    let key = `${orderProperty}|${direction}|${deferred}|${options.linkedIds?.as ?? ''}|${options.attached?.as ?? ''}`;
    for (const condition of conditions)
      key += 'link' in condition ? `|${condition.link.table}` : `|${condition.property}${condition.operator}`;
    const cached = this.sqlCache.get(key);
    if (cached !== undefined) return cached;

    const metadata = this.repository.metadata;
    const table = `"${metadata.tableName}"`;
    const where = this.whereOf(conditions);
    const orderColumn = this.columnOf(orderProperty);
    const order = orderColumn === '"id"' ? `t."id" ${direction}` : `t.${orderColumn} ${direction}, t."id" ${direction}`;
    const pageOrder = orderProperty === 'id' ? `page."id" ${direction}` : `page."${orderProperty}" ${direction}, page."id" ${direction}`;
    const select = this.selectList();
    if (options.linkedIds) select.push(this.linkedIdsSelect(options.linkedIds));
    if (options.attached) select.push(`${options.attached.select} AS "${options.attached.as}"`);
    const parameterCount = conditions.length + 1;
    const limits = `LIMIT $${parameterCount + 1} OFFSET $${parameterCount + 2}`;
    const page = deferred
      ? `SELECT ${select.join(', ')} FROM ${table} t JOIN (SELECT t."id" FROM ${table} t WHERE ${where} ORDER BY ${order} ${limits}) ids ON ids."id" = t."id" WHERE t.customer_id = $1`
      : `SELECT ${select.join(', ')} FROM ${table} t WHERE ${where} ORDER BY ${order} ${limits}`;

    const statusOnly = conditions.every(
      (condition) => !('link' in condition) && condition.property === 'status' && condition.operator === '=',
    );
    const counted = statusOnly && COUNTED_TABLES.has(metadata.tableName);
    const countedStatus = counted && conditions.length === 1;
    const count = counted
      ? `SELECT coalesce(sum(count), 0) AS total FROM tenant_counts WHERE customer_id = $1 AND resource = '${metadata.tableName}'${countedStatus ? ` AND status = $${parameterCount + 3}` : ''}`
      : `SELECT count(*) AS total FROM ${table} t WHERE ${where}`;
    const statement = {
      sql: prepared(
        `SELECT total.total AS "${TOTAL}", page.* FROM (${count}) total LEFT JOIN (${page}) page ON true ORDER BY ${pageOrder}`,
      ),
      countedStatus,
    };
    this.sqlCache.set(key, statement);
    return statement;
  }

  /** A query builder narrowed to the tenant. `where()` and `orWhere()` throw: they would drop or widen the tenant predicate. */
  protected query(transaction?: Transaction): SelectQueryBuilder<E> {
    const builder = this.managerOf(transaction)
      .createQueryBuilder(this.repository.target, this.alias)
      .where(`${this.alias}.customerId = :tenantCustomerId`, { tenantCustomerId: this.tenant.customerId });
    return Object.assign(builder, { where: refuseUnscopedWhere, orWhere: refuseUnscopedWhere });
  }

  /**
   * A hand-written statement on this workspace's rows, the only way a subclass runs raw SQL: `$1`
   * is always the tenant's customer id, bound here, and the caller's parameters follow as `$2`,
   * `$3`, …. A statement that does not narrow to `customer_id = $1` (or write it, for an INSERT) is
   * refused before it reaches PostgreSQL, so the tenant predicate cannot be forgotten. The check
   * runs once per statement text. Answers the rows, and for UPDATE and DELETE the rows RETURNING
   * gives (none without it) with the count of rows affected.
   */
  protected async tenantQuery<R = Record<string, unknown>>(
    sql: string,
    parameters: unknown[] = [],
    transaction?: Transaction,
  ): Promise<{ rows: R[]; affected: number }> {
    let counted = checkedStatements.get(sql);
    if (counted === undefined) {
      if (!TENANT_PREDICATE.test(sql)) throw new Error(`A tenant statement must narrow to customer_id = $1: ${sql}`);
      counted = /^\s*(UPDATE|DELETE)\b/i.test(sql);
      if (checkedStatements.size >= MAX_CHECKED_STATEMENTS) checkedStatements.clear();
      checkedStatements.set(sql, counted);
    }
    const result: unknown = await this.managerOf(transaction).query(sql, [this.tenant.customerId, ...parameters]);
    // TypeORM's postgres driver answers an UPDATE or DELETE with [rows, rowCount], anything else with its rows.
    if (counted) {
      const [rows, affected] = result as [R[], number];
      return { rows, affected };
    }
    const rows = result as R[];
    return { rows, affected: rows.length };
  }

  /** One object by id, or null; `FOR UPDATE` when a transaction is about to change it. */
  async findById(id: number, options: { transaction?: Transaction; lock?: boolean } = {}): Promise<E | null> {
    const sql = options.lock ? this.byIdSql.forUpdate : this.byIdSql.read;
    const rows: E[] = await this.managerOf(options.transaction).query(sql, [this.tenant.customerId, id]);
    return rows[0] ?? null;
  }

  /**
   * The by-id statements, written once like the list's (columns aliased to entity properties):
   * building them with the query builder cost about a quarter of a detail request's CPU.
   */
  private get byIdSql(): { read: string; forUpdate: string } {
    if (this.byIdStatements === undefined) {
      const read = `SELECT ${this.selectList().join(', ')} FROM "${this.repository.metadata.tableName}" t WHERE t.customer_id = $1 AND t."id" = $2`;
      this.byIdStatements = { read: prepared(read), forUpdate: prepared(`${read} FOR UPDATE`) };
    }
    return this.byIdStatements;
  }

  /** Every loaded column as `t."column" AS "property"`, so rows read like entities without hydration. */
  private selectList(): string[] {
    return this.repository.metadata.columns
      .filter((column) => column.isSelect)
      .map((column) => `t."${column.databaseName}" AS "${column.propertyName}"`);
  }

  /** One object by id; a 404 when it is missing, which is also what another workspace's id gives. */
  async getById(id: number, options: { transaction?: Transaction; lock?: boolean } = {}): Promise<E> {
    const found = await this.findById(id, options);
    if (!found) throw ApiError.notFound();
    return found;
  }

  /**
   * One object by id with a value attached (an `AttachedValue`, e.g. an audience's destinations),
   * in one statement: what a detail answer shows is one round trip. A 404 when it is missing.
   */
  protected async getByIdWith<R extends E>(id: number, attached: AttachedValue, transaction?: Transaction): Promise<R> {
    let sql = this.byIdWithStatements.get(attached.as);
    if (sql === undefined) {
      const select = [...this.selectList(), `${attached.select} AS "${attached.as}"`];
      sql = prepared(`SELECT ${select.join(', ')} FROM "${this.repository.metadata.tableName}" t WHERE t.customer_id = $1 AND t."id" = $2`);
      this.byIdWithStatements.set(attached.as, sql);
    }
    const rows: R[] = await this.managerOf(transaction).query(sql, [this.tenant.customerId, id]);
    if (rows[0] === undefined) throw ApiError.notFound();
    return rows[0];
  }

  /** The ids among `ids` that exist in the tenant: for validating references. */
  async existingIds(ids: number[], transaction?: Transaction): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = await this.query(transaction)
      .select(`${this.alias}.id`, 'id')
      .andWhere(`${this.alias}.id IN (:...ids)`, { ids })
      .getRawMany<{ id: number }>();
    return new Set(rows.map((row) => Number(row.id)));
  }

  async insert(values: Omit<Partial<E>, 'customerId' | 'id'>, transaction?: Transaction): Promise<E> {
    const repository = this.managerOf(transaction).getRepository<E>(this.repository.target);
    const created = repository.create({ ...values, customerId: this.tenant.customerId } as E);
    return repository.save(created);
  }

  /**
   * Writes the changes to an object loaded through this repository (its customer_id is the
   * tenant's) with one UPDATE … RETURNING, narrowed to the tenant like every other statement here.
   * TypeORM's own save() would first reload the row to diff it: one more round trip on every PATCH.
   */
  async save(object: E, transaction?: Transaction): Promise<E> {
    const tenant = this.tenant;
    if (object.customerId !== tenant.customerId) throw new Error('Refusing to save an object of another tenant');
    const values: Record<string, unknown> = {};
    for (const column of this.repository.metadata.columns) {
      // Keys, timestamps the database keeps, and columns never loaded (select: false) are left alone.
      if (column.isPrimary || column.isCreateDate || column.isUpdateDate || !column.isSelect) continue;
      const value = column.getEntityValue(object);
      if (value !== undefined) values[column.propertyName] = value;
    }
    const entityManager = this.managerOf(transaction);
    const [sql, parameters] = entityManager
      .createQueryBuilder()
      .update(this.repository.target)
      .set(values as never)
      .where('customer_id = :tenantCustomerId AND id = :id', { tenantCustomerId: tenant.customerId, id: object.id })
      .getQueryAndParameters();
    // TypeORM 1.x leaves RETURNING out of an UPDATE built this way, so it is added here.
    // For an UPDATE, TypeORM's postgres driver answers [rows, rowCount].
    const [rows] = (await entityManager.query(`${sql} RETURNING "updated_at"`, parameters)) as [{ updated_at: Date }[], number];
    const row = rows[0];
    if (!row) throw new Error(`No ${this.repository.metadata.tableName} row ${object.id} in this workspace to save`);
    object.updatedAt = row.updated_at ?? object.updatedAt;
    return object;
  }

  async delete(id: number, transaction?: Transaction): Promise<boolean> {
    const result = await this.managerOf(transaction)
      .createQueryBuilder()
      .delete()
      .from(this.repository.target)
      .where('customer_id = :tenantCustomerId AND id = :id', { tenantCustomerId: this.tenant.customerId, id })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /** `customer_id = $1` first, then each condition on $2, $3, …: the tenant predicate cannot be left out. */
  private whereOf(conditions: ListCondition<E>[]): string {
    return [
      't.customer_id = $1',
      ...conditions.map((condition, index) =>
        'link' in condition
          ? `EXISTS (SELECT 1 FROM ${condition.link.table} link WHERE link.customer_id = t.customer_id AND link.${condition.link.owner} = t.id AND link.${condition.link.value} = $${index + 2})`
          : `t.${this.columnOf(condition.property)} ${condition.operator} $${index + 2}`,
      ),
    ].join(' AND ');
  }

  private columnOf(property: string): string {
    const column = this.repository.metadata.findColumnWithPropertyName(property);
    if (!column) throw new Error(`No column for property ${property}`);
    return `"${column.databaseName}"`;
  }

  private linkedIdsSelect(linked: LinkedIds<ObjectLiteral> | { as: string; link: LinkTable }): string {
    if ('link' in linked) {
      const { table, owner, value } = linked.link;
      return `ARRAY(SELECT link.${value} FROM ${table} link WHERE link.customer_id = t.customer_id AND link.${owner} = t.id ORDER BY link.${value}) AS "${linked.as}"`;
    }
    const { as, entity, owner, value } = linked;
    const link = this.repository.manager.connection.getMetadata(entity);
    const column = (property: string) => {
      const found = link.findColumnWithPropertyName(property);
      if (!found) throw new Error(`No column for property ${property} of ${link.tableName}`);
      return `link."${found.databaseName}"`;
    };
    return `ARRAY(SELECT ${column(value)} FROM "${link.tableName}" link WHERE link."customer_id" = t.customer_id AND ${column(owner)} = t.id ORDER BY ${column(value)}) AS "${as}"`;
  }
}
