import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Equal, type Repository } from 'typeorm';
import { EntityRepository } from '../common/tenancy/entity-repository.js';
import { offsetOf, type PageRequest } from '../common/pagination/pagination.js';
import type { UserRole } from '../common/access/user-role.js';
import { McpToken } from './mcp-token.entity.js';
import { type Transaction, entityManagerOf } from '../common/tenancy/transactions.js';

/** The user a token belongs to; every method but the credential lookup is narrowed to one. */
export interface McpTokenOwner {
  userId: number;
  customerId: number;
}

export interface NewMcpTokenRow extends McpTokenOwner {
  name: string;
  prefix: string;
  tokenHash: Buffer;
  expiresAt: Date;
}

/** A token with what a request needs of its user, read in one statement. */
export interface McpTokenCredential {
  id: number;
  userId: number;
  customerId: number;
  role: UserRole;
  userActive: boolean;
  tokenHash: Buffer;
  expiresAt: Date;
  revokedAt: Date | null;
}

/** The list's ordering fields (SPEC section 4) mapped to entity properties. */
const ORDERING_PROPERTIES: Record<string, keyof McpToken> = { id: 'id', name: 'name', created_at: 'createdAt' };

/**
 * All SQL about MCP tokens. Not a TenantRepository: /mcp finds a token by its prefix to learn
 * whose it is, before any workspace is known; the other methods take their owner explicitly.
 */
@Injectable()
export class McpTokensRepository extends EntityRepository<McpToken> {
  constructor(@InjectRepository(McpToken) tokens: Repository<McpToken>) {
    super(tokens);
  }

  insert(values: NewMcpTokenRow, transaction?: Transaction): Promise<McpToken> {
    return this.managerOf(transaction).getRepository(McpToken).save(values);
  }

  /**
   * How many tokens the owner holds that still work (not revoked, not expired at `now`), with
   * the owner's user row locked until the transaction ends, so two concurrent creates cannot both
   * pass the per-user cap.
   */
  async lockOwnerAndCountUsable(owner: McpTokenOwner, now: Date, transaction: Transaction): Promise<number> {
    await entityManagerOf(transaction).query('SELECT 1 FROM users WHERE customer_id = $1 AND id = $2 FOR UPDATE', [
      owner.customerId,
      owner.userId,
    ]);
    const rows: { count: string }[] = await entityManagerOf(transaction).query(
      'SELECT count(*) AS count FROM mcp_tokens WHERE customer_id = $1 AND user_id = $2 AND revoked_at IS NULL AND expires_at > $3',
      [owner.customerId, owner.userId, now],
    );
    return Number(rows[0]?.count ?? 0);
  }

  /** A page of the owner's tokens that are not revoked, with their count; no row query past the end. */
  async listUnrevoked(owner: McpTokenOwner, request: PageRequest): Promise<{ rows: McpToken[]; count: number }> {
    const query = this.repository
      .createQueryBuilder('token')
      .where('token.customerId = :customerId AND token.userId = :userId', { customerId: owner.customerId, userId: owner.userId })
      .andWhere('token.revokedAt IS NULL');
    const count = await query.clone().getCount();
    const offset = offsetOf(request);
    if (count <= offset) return { rows: [], count };
    const rows = await query
      .orderBy(`token.${ORDERING_PROPERTIES[request.ordering.field] ?? 'id'}`, request.ordering.direction)
      .addOrderBy('token.id', request.ordering.direction)
      .offset(offset)
      .limit(request.pageSize)
      .getMany();
    return { rows, count };
  }

  /** One of the owner's tokens, revoked or not; another user's is null, as if it did not exist. */
  findOwned(owner: McpTokenOwner, id: number): Promise<McpToken | null> {
    return this.repository.findOneBy({ customerId: Equal(owner.customerId), id: Equal(id), userId: Equal(owner.userId) });
  }

  async revoke(token: Pick<McpToken, 'customerId' | 'id'>, revokedAt: Date, transaction?: Transaction): Promise<void> {
    await this.managerOf(transaction)
      .getRepository(McpToken)
      .update({ customerId: Equal(token.customerId), id: Equal(token.id) }, { revokedAt });
  }

  /** The token with this prefix and its user's role and active flag, in one statement: what authenticating on /mcp needs. */
  async findCredential(prefix: string): Promise<McpTokenCredential | null> {
    const rows: McpTokenCredential[] = await this.repository.manager.query(
      `SELECT t.id, t.user_id AS "userId", t.customer_id AS "customerId", u.role, u.is_active AS "userActive",
              t.token_hash AS "tokenHash", t.expires_at AS "expiresAt", t.revoked_at AS "revokedAt"
         FROM mcp_tokens t JOIN users u ON u.id = t.user_id
        WHERE t.prefix = $1`,
      [prefix],
    );
    return rows[0] ?? null;
  }

  async recordUse(token: Pick<McpToken, 'customerId' | 'id'>, at: Date): Promise<void> {
    await this.repository.update({ customerId: Equal(token.customerId), id: Equal(token.id) }, { lastUsedAt: at });
  }
}
