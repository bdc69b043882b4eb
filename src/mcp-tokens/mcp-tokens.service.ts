import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { DataSource, Equal } from 'typeorm';
import { type CredentialCache, publishInvalidation } from '../common/credential-cache/credential-cache.js';
import { CREDENTIAL_CACHE } from '../common/credential-cache/credential-cache.token.js';
import type { Identity } from '../auth/identity.js';
import { matchesHash } from '../common/crypto/secret-hash.js';
import { ApiError } from '../common/errors/api-error.js';
import { buildPage, offsetOf, type Page, type PageRequest } from '../common/pagination/pagination.js';
import { Clock } from '../common/time/clock.js';
import { OncePer } from '../common/time/once-per.js';
import { LOGGER } from '../logging/logger.token.js';
import type { UserRole } from '../users/user-role.js';
import { generateMcpToken, mcpTokenPrefix } from './mcp-token-format.js';
import { McpToken } from './mcp-token.entity.js';

export const DEFAULT_LIFETIME_DAYS = 90;
export const MAX_LIFETIME_DAYS = 365;

export interface McpTokenView {
  id: number;
  name: string;
  prefix: string;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
}

/** What a request needs of a token and its user, cached by prefix. */
interface TokenRecord {
  id: number;
  userId: number;
  customerId: number;
  role: UserRole;
  userActive: boolean;
  hash: Buffer;
  expiresAtMs: number;
  revokedAtMs: number | null;
}

/** Personal MCP tokens: a user's own, managed with a JWT, used only on /mcp (SPEC sections 2 and 7). */
@Injectable()
export class McpTokensService {
  /** last_used_at is written at most once a minute per credential, never on every request. */
  private readonly lastUsedWrites = new OncePer(60_000);

  constructor(
    private readonly dataSource: DataSource,
    private readonly clock: Clock,
    @Inject(CREDENTIAL_CACHE) private readonly cache: CredentialCache,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async create(
    owner: { userId: number; customerId: number },
    name: string,
    expiresInDays = DEFAULT_LIFETIME_DAYS,
  ): Promise<McpTokenView & { token: string }> {
    const generated = generateMcpToken();
    const expiresAt = new Date(this.clock.nowMs() + expiresInDays * 86_400_000);
    const saved = await this.dataSource.transaction(async (manager) => {
      const row = await manager.getRepository(McpToken).save({
        customerId: owner.customerId,
        userId: owner.userId,
        name,
        prefix: generated.prefix,
        tokenHash: generated.hash,
        expiresAt,
      });
      await publishInvalidation(manager, `mcptoken:${generated.prefix}`);
      return row;
    });
    this.cache.invalidate(`mcptoken:${generated.prefix}`);
    return { ...toView(saved), token: generated.token };
  }

  /** The user's own tokens that can still be used, newest first. */
  async list(owner: { userId: number; customerId: number }, request: PageRequest, url: URL): Promise<Page<McpTokenView>> {
    const query = this.dataSource
      .getRepository(McpToken)
      .createQueryBuilder('token')
      .where('token.customerId = :customerId AND token.userId = :userId', { customerId: owner.customerId, userId: owner.userId })
      .andWhere('token.revokedAt IS NULL');
    const count = await query.clone().getCount();
    const rows =
      count > offsetOf(request)
        ? await query
            .orderBy(
              `token.${request.ordering.field === 'name' ? 'name' : request.ordering.field === 'created_at' ? 'createdAt' : 'id'}`,
              request.ordering.direction,
            )
            .addOrderBy('token.id', request.ordering.direction)
            .offset(offsetOf(request))
            .limit(request.pageSize)
            .getMany()
        : [];
    return buildPage(request, count, rows.map(toView), url);
  }

  /** Revokes one of the user's own tokens; another user's token is a 404, as if it did not exist. */
  async revoke(owner: { userId: number; customerId: number }, id: number): Promise<void> {
    const token = await this.dataSource
      .getRepository(McpToken)
      .findOneBy({ customerId: Equal(owner.customerId), id: Equal(id), userId: Equal(owner.userId) });
    if (!token || token.revokedAt !== null) throw ApiError.notFound();
    await this.dataSource.transaction(async (manager) => {
      await manager.getRepository(McpToken).update({ customerId: Equal(owner.customerId), id: Equal(id) }, { revokedAt: this.clock.now() });
      await publishInvalidation(manager, `mcptoken:${token.prefix}`);
    });
    this.cache.invalidate(`mcptoken:${token.prefix}`);
  }

  /** The token's user as an identity, if the token exists, matches, is live and its user active. */
  async authenticate(token: string): Promise<Identity | null> {
    const prefix = mcpTokenPrefix(token);
    if (prefix === undefined) return null;
    const record = await this.cache.get(`mcptoken:${prefix}`, () => this.load(prefix));
    if (!record || !matchesHash(token, record.hash) || !record.userActive) return null;
    const now = this.clock.nowMs();
    if (record.revokedAtMs !== null || record.expiresAtMs <= now) return null;
    this.touch(record, now);
    return { kind: 'mcp_token', mcpTokenId: record.id, userId: record.userId, customerId: record.customerId, role: record.role };
  }

  private async load(prefix: string): Promise<TokenRecord | null> {
    const rows: {
      id: number;
      user_id: number;
      customer_id: number;
      role: UserRole;
      is_active: boolean;
      token_hash: Buffer;
      expires_at: Date;
      revoked_at: Date | null;
    }[] = await this.dataSource.query(
      `SELECT t.id, t.user_id, t.customer_id, u.role, u.is_active, t.token_hash, t.expires_at, t.revoked_at
           FROM mcp_tokens t JOIN users u ON u.id = t.user_id
          WHERE t.prefix = $1`,
      [prefix],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      userId: row.user_id,
      customerId: row.customer_id,
      role: row.role,
      userActive: row.is_active,
      hash: row.token_hash,
      expiresAtMs: row.expires_at.getTime(),
      revokedAtMs: row.revoked_at?.getTime() ?? null,
    };
  }

  private touch(record: TokenRecord, now: number): void {
    if (!this.lastUsedWrites.due(record.id, now)) return;
    this.dataSource
      .getRepository(McpToken)
      .update({ customerId: Equal(record.customerId), id: Equal(record.id) }, { lastUsedAt: new Date(now) })
      .catch((error: unknown) => this.logger.warn({ err: error, mcp_token: record.id }, 'could not record MCP token use'));
  }
}

function toView(token: McpToken): McpTokenView {
  return {
    id: token.id,
    name: token.name,
    prefix: token.prefix,
    created_at: token.createdAt.toISOString(),
    expires_at: token.expiresAt.toISOString(),
    last_used_at: token.lastUsedAt?.toISOString() ?? null,
  };
}
