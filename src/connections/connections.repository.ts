import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { DEFAULT_ORDERING_COLUMNS, type OrderingColumns, type PageRequest } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type ListCondition, type ListResult, TenantRepository } from '../common/tenancy/tenant-repository.js';
import { Connection, type Platform } from './connection.entity.js';
import type { ListConnectionsQuery } from './dto/list-connections.query.js';
import type { EncryptedToken } from './token-cipher.js';
import { type Transaction } from '../common/tenancy/transactions.js';

/** The encrypted token columns of one connection; null where none is stored (e.g. made by the CLI). */
export interface StoredTokens {
  accessToken: EncryptedToken | null;
  refreshToken: EncryptedToken | null;
}

/** The columns a connection is made of, minus the tokens, which only go in encrypted. */
export type NewConnection = Pick<Connection, 'platform' | 'externalAccountId' | 'accountName'> &
  Partial<Pick<Connection, 'status' | 'statusReason' | 'scopes' | 'connectedBy' | 'tokenExpiresAt' | 'lastRefreshedAt'>>;

/** Connections have no `name`: the SPEC's `ordering=name` sorts by the account name. */
const ORDERING_COLUMNS: OrderingColumns<Connection> = { ...DEFAULT_ORDERING_COLUMNS, name: 'accountName' };

/** All SQL about ad-platform connections. */
@Injectable()
export class ConnectionsRepository extends TenantRepository<Connection> {
  constructor(@InjectRepository(Connection) connections: Repository<Connection>, tenants: TenantContext) {
    super(connections, tenants, 'connection');
  }

  list(filters: ListConnectionsQuery, request: PageRequest): Promise<ListResult<Connection>> {
    // Another workspace's `?customer=` can match nothing (SPEC section 1).
    if (filters.customer !== undefined && filters.customer !== this.tenant.customerId) return Promise.resolve({ rows: [], count: 0 });
    const conditions: ListCondition<Connection>[] = [];
    if (filters.platform !== undefined) conditions.push({ property: 'platform', operator: '=', value: filters.platform });
    if (filters.status !== undefined) conditions.push({ property: 'status', operator: '=', value: filters.status });
    if (filters.search !== undefined) conditions.push({ property: 'accountName', operator: 'ILIKE', value: filters.search });
    return this.listPage(conditions, request, { columns: ORDERING_COLUMNS });
  }

  /** The tenant's connection to this account of this platform, if any. */
  findByAccount(platform: Platform, externalAccountId: string): Promise<Connection | null> {
    return this.query()
      .andWhere('connection.platform = :platform AND connection.externalAccountId = :externalAccountId', { platform, externalAccountId })
      .getOne();
  }

  /**
   * Inserts a connection with its OAuth tokens. The token parameters only take TokenCipher output,
   * so plaintext cannot reach the table. The returned object carries no token, like every read.
   */
  async insertWithTokens(values: NewConnection, tokens: Partial<StoredTokens>, transaction?: Transaction): Promise<Connection> {
    const saved = await this.insert(
      { ...values, accessTokenEncrypted: tokens.accessToken ?? null, refreshTokenEncrypted: tokens.refreshToken ?? null },
      transaction,
    );
    delete (saved as Partial<Connection>).accessTokenEncrypted;
    delete (saved as Partial<Connection>).refreshTokenEncrypted;
    return saved;
  }

  /** The tenant's connection to this account, locked for the transaction that refreshes it in place. */
  findByAccountForUpdate(platform: Platform, externalAccountId: string, transaction: Transaction): Promise<Connection | null> {
    return this.query(transaction)
      .andWhere('connection.platform = :platform AND connection.externalAccountId = :externalAccountId', { platform, externalAccountId })
      .setLock('pessimistic_write')
      .getOne();
  }

  /**
   * Replaces a connection's encrypted tokens (TokenCipher output only). `refreshToken: undefined`
   * keeps the stored one. The row's other columns are the caller's, through save().
   */
  async storeTokens(
    id: number,
    tokens: { accessToken: EncryptedToken | null; refreshToken?: EncryptedToken | null },
    transaction: Transaction,
  ): Promise<void> {
    const refresh = tokens.refreshToken !== undefined;
    await this.tenantQuery(
      `UPDATE connections SET access_token_encrypted = $3${refresh ? ', refresh_token_encrypted = $4' : ''}, updated_at = now() WHERE customer_id = $1 AND id = $2`,
      refresh ? [id, tokens.accessToken, tokens.refreshToken] : [id, tokens.accessToken],
      transaction,
    );
  }

  /** The encrypted tokens (columns that are `select: false`), or null when the connection is not the tenant's. */
  async storedTokens(id: number, transaction?: Transaction): Promise<StoredTokens | null> {
    const row = await this.query(transaction)
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
