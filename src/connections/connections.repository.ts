import { Injectable } from '../common/nest/light.js';
import { DataSource, type EntityManager } from 'typeorm';
import type { PageRequest } from '../common/pagination/pagination.js';
import type { Tenant } from '../common/tenancy/tenant.js';
import {
  DEFAULT_ORDERING_COLUMNS,
  type OrderingColumns,
  type ListCondition,
  TenantRepository,
} from '../common/tenancy/tenant-repository.js';
import { Connection, type ConnectionStatus, type Platform } from './connection.entity.js';
import type { EncryptedToken } from './token-cipher.js';

export interface ConnectionFilters {
  /** `?customer=`: anything but the caller's own workspace matches nothing (SPEC section 1). */
  customerId?: number;
  platform?: Platform;
  status?: ConnectionStatus;
}

/** The encrypted token columns of one connection; null where none is stored (e.g. made by the CLI). */
export interface StoredTokens {
  accessToken: EncryptedToken | null;
  refreshToken: EncryptedToken | null;
}

/** The columns a connection is made of, minus the tokens, which only go in encrypted. */
export type NewConnection = Pick<Connection, 'platform' | 'externalAccountId' | 'accountName'> &
  Partial<Pick<Connection, 'status' | 'scopes' | 'connectedBy' | 'tokenExpiresAt' | 'lastRefreshedAt'>>;

/** Connections have no `name`: the SPEC's `ordering=name` sorts by the account name. */
const ORDERING_COLUMNS: OrderingColumns = { ...DEFAULT_ORDERING_COLUMNS, name: 'accountName' };

/** All SQL about ad-platform connections. */
@Injectable()
export class ConnectionsRepository extends TenantRepository<Connection> {
  constructor(private readonly database: DataSource) {
    super(database, Connection, 'connection');
  }

  list(tenant: Tenant, filters: ConnectionFilters, request: PageRequest) {
    // Another workspace's `?customer=` can match nothing (SPEC section 1).
    if (filters.customerId !== undefined && filters.customerId !== tenant.customerId)
      return Promise.resolve({ rows: [] as Connection[], count: 0 });
    const conditions: ListCondition[] = [];
    if (filters.platform !== undefined) conditions.push({ property: 'platform', operator: '=', value: filters.platform });
    if (filters.status !== undefined) conditions.push({ property: 'status', operator: '=', value: filters.status });
    return this.listPage(tenant, conditions, request, {
      columns: ORDERING_COLUMNS,
      counted: filters.platform === undefined ? { tenant, status: filters.status } : undefined,
    });
  }

  /**
   * Inserts a connection with its OAuth tokens. The token parameters only take TokenCipher output,
   * so plaintext cannot reach the table. The returned object carries no token, like every read.
   */
  async insertWithTokens(
    tenant: Tenant,
    values: NewConnection,
    tokens: Partial<StoredTokens>,
    manager: EntityManager = this.database.manager,
  ): Promise<Connection> {
    const saved = await this.insert(
      tenant,
      { ...values, accessTokenEncrypted: tokens.accessToken ?? null, refreshTokenEncrypted: tokens.refreshToken ?? null },
      manager,
    );
    delete (saved as Partial<Connection>).accessTokenEncrypted;
    delete (saved as Partial<Connection>).refreshTokenEncrypted;
    return saved;
  }

  /** The encrypted tokens (columns that are `select: false`), or null when the connection is not the tenant's. */
  async storedTokens(tenant: Tenant, id: number, manager?: EntityManager): Promise<StoredTokens | null> {
    const row = await this.query(tenant, manager)
      .select(['connection.customerId', 'connection.id', 'connection.accessTokenEncrypted', 'connection.refreshTokenEncrypted'])
      .andWhere('connection.id = :id', { id })
      .getOne();
    if (!row) return null;
    return {
      accessToken: (row.accessTokenEncrypted as EncryptedToken | null) ?? null,
      refreshToken: (row.refreshTokenEncrypted as EncryptedToken | null) ?? null,
    };
  }
}
