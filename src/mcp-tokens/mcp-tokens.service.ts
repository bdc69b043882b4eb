import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { type CredentialCache, publishInvalidation } from '../common/credential-cache/credential-cache.js';
import { CREDENTIAL_CACHE } from '../common/credential-cache/credential-cache.token.js';
import type { Identity } from '../common/access/identity.js';
import { matchesHash } from '../common/crypto/secret-hash.js';
import { ApiError } from '../common/errors/api-error.js';
import { buildPage, type Page, type PageRequest } from '../common/pagination/pagination.js';
import { Clock } from '../common/time/clock.js';
import { OncePer } from '../common/time/once-per.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { Transactions } from '../common/tenancy/transactions.js';
import { LOGGER } from '../logging/logger.token.js';
import type { UserRole } from '../common/access/user-role.js';
import { generateMcpToken, mcpTokenPrefix } from './mcp-token-format.js';
import type { McpToken } from './mcp-token.entity.js';
import { type McpTokenOwner, McpTokensRepository } from './mcp-tokens.repository.js';

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
    private readonly tokens: McpTokensRepository,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    @Inject(CREDENTIAL_CACHE) private readonly cache: CredentialCache,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(owner: McpTokenOwner, name: string, expiresInDays = DEFAULT_LIFETIME_DAYS): Promise<McpTokenView & { token: string }> {
    const generated = generateMcpToken();
    const expiresAt = new Date(this.clock.nowMs() + expiresInDays * 86_400_000);
    const saved = await this.transactions.run(async (transaction) => {
      const usable = await this.tokens.lockOwnerAndCountUsable(owner, new Date(this.clock.nowMs()), transaction);
      if (usable >= this.config.mcpTokensPerUser) {
        throw ApiError.conflict(
          `You already hold ${usable} usable MCP tokens, the most allowed (${this.config.mcpTokensPerUser}). Revoke one you no longer use first.`,
        );
      }
      const row = await this.tokens.insert(
        { customerId: owner.customerId, userId: owner.userId, name, prefix: generated.prefix, tokenHash: generated.hash, expiresAt },
        transaction,
      );
      await publishInvalidation(transaction, `mcptoken:${generated.prefix}`);
      return row;
    });
    this.cache.invalidate(`mcptoken:${generated.prefix}`);
    return { ...toView(saved), token: generated.token };
  }

  /** The user's own tokens that can still be used, newest first. */
  async list(owner: McpTokenOwner, request: PageRequest, url: URL): Promise<Page<McpTokenView>> {
    const { rows, count } = await this.tokens.listUnrevoked(owner, request);
    return buildPage(request, count, rows.map(toView), url);
  }

  /** Revokes one of the user's own tokens; another user's token is a 404, as if it did not exist. */
  async revoke(owner: McpTokenOwner, id: number): Promise<void> {
    const token = await this.tokens.findOwned(owner, id);
    if (!token || token.revokedAt !== null) throw ApiError.notFound();
    await this.transactions.run(async (transaction) => {
      await this.tokens.revoke(token, this.clock.now(), transaction);
      await publishInvalidation(transaction, `mcptoken:${token.prefix}`);
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
    const credential = await this.tokens.findCredential(prefix);
    if (!credential) return null;
    return {
      id: credential.id,
      userId: credential.userId,
      customerId: credential.customerId,
      role: credential.role,
      userActive: credential.userActive,
      hash: credential.tokenHash,
      expiresAtMs: credential.expiresAt.getTime(),
      revokedAtMs: credential.revokedAt?.getTime() ?? null,
    };
  }

  private touch(record: TokenRecord, now: number): void {
    if (!this.lastUsedWrites.due(record.id, now)) return;
    this.tokens
      .recordUse(record, new Date(now))
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
