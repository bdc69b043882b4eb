import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { publishInvalidation, type CredentialCache } from '../common/credential-cache/credential-cache.js';
import { CREDENTIAL_CACHE } from '../common/credential-cache/credential-cache.token.js';
import { ApiError, type FieldErrors } from '../common/errors/api-error.js';
import { Clock } from '../common/time/clock.js';
import { OncePer } from '../common/time/once-per.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { CustomersRepository } from '../customers/customers.repository.js';
import { Transactions } from '../common/tenancy/transactions.js';
import { LOGGER } from '../logging/logger.token.js';
import { apiKeyMatches, generateApiKey, prefixOf } from './api-key-format.js';
import { API_KEY_SCOPES, type ApiKey, type ApiKeyScope } from './api-key.entity.js';
import { ApiKeysRepository } from './api-keys.repository.js';

export interface NewApiKey {
  customerId: number;
  name: string;
  scope?: ApiKeyScope;
  expiresInDays?: number;
}

/** What a request needs of a key, cached by prefix. */
interface KeyRecord {
  id: number;
  customerId: number;
  scope: ApiKeyScope;
  keyHash: Buffer;
  expiresAtMs: number | null;
  revokedAtMs: number | null;
}

export interface AuthenticatedKey {
  id: number;
  customerId: number;
  scope: ApiKeyScope;
}

/** Static API keys: provisioned by the operator (CLI), checked on every request that presents one. */
@Injectable()
export class ApiKeysService {
  /** last_used_at is written at most once a minute per credential, never on every request. */
  private readonly lastUsedWrites = new OncePer(60_000);

  constructor(
    private readonly apiKeys: ApiKeysRepository,
    private readonly customers: CustomersRepository,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    @Inject(CREDENTIAL_CACHE) private readonly cache: CredentialCache,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'apiKeyRotationGraceHours'>,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Creates a key; the plain key is in the result and nowhere else, ever. */
  async create({ customerId, name, scope = 'write', expiresInDays }: NewApiKey): Promise<{ apiKey: ApiKey; key: string }> {
    const errors: FieldErrors = {};
    const trimmed = name.trim();
    if (trimmed.length < 1 || trimmed.length > 255) errors.name = ['Must be 1 to 255 characters.'];
    if (!API_KEY_SCOPES.includes(scope)) errors.scope = [`Must be one of ${API_KEY_SCOPES.join(', ')}.`];
    if (expiresInDays !== undefined && (!Number.isInteger(expiresInDays) || expiresInDays < 1 || expiresInDays > 3650)) {
      errors.expires_in_days = ['Must be an integer from 1 to 3650.'];
    }
    if (Object.keys(errors).length > 0) throw ApiError.validation(errors);
    if (!(await this.customers.exists(customerId))) {
      throw ApiError.field('customer', `Customer ${customerId} does not exist.`);
    }
    const generated = generateApiKey();
    const expiresAt = expiresInDays === undefined ? null : new Date(this.clock.nowMs() + expiresInDays * 86_400_000);
    const apiKey = await this.transactions.run(async (transaction) => {
      const saved = await this.apiKeys.insert(
        { customerId, name: trimmed, prefix: generated.prefix, keyHash: generated.hash, scope, expiresAt },
        transaction,
      );
      // A cached "no such prefix" must not outlive the key's creation.
      await publishInvalidation(transaction, `apikey:${generated.prefix}`);
      return saved;
    });
    this.cache.invalidate(`apikey:${generated.prefix}`);
    return { apiKey, key: generated.key };
  }

  list(customerId: number): Promise<ApiKey[]> {
    return this.apiKeys.listByCustomer(customerId);
  }

  async revoke(id: number): Promise<ApiKey> {
    const apiKey = await this.find(id);
    if (apiKey.revokedAt === null) {
      const revokedAt = this.clock.now();
      apiKey.revokedAt = revokedAt;
      await this.transactions.run(async (transaction) => {
        await this.apiKeys.revoke(apiKey, revokedAt, transaction);
        await publishInvalidation(transaction, `apikey:${apiKey.prefix}`);
      });
      this.cache.invalidate(`apikey:${apiKey.prefix}`);
    }
    return apiKey;
  }

  /**
   * Issues a replacement with the same name, scope and workspace; the old key keeps working for the
   * grace period (default API_KEY_ROTATION_GRACE_HOURS), so integrations move over without downtime.
   */
  async rotate(id: number, graceHours = this.config.apiKeyRotationGraceHours): Promise<{ apiKey: ApiKey; key: string; previous: ApiKey }> {
    if (!Number.isInteger(graceHours) || graceHours < 0 || graceHours > 24 * 365)
      throw ApiError.field('grace_hours', 'Must be an integer from 0 to 8760.');
    const previous = await this.find(id);
    if (previous.revokedAt !== null) throw ApiError.conflict(`API key ${id} is revoked and cannot be rotated.`);
    if (previous.replacedById !== null)
      throw ApiError.conflict(`API key ${id} was already rotated (replaced by ${previous.replacedById}).`);
    const generated = generateApiKey();
    const graceEnd = new Date(this.clock.nowMs() + graceHours * 3_600_000);
    const result = await this.transactions.run(async (transaction) => {
      const apiKey = await this.apiKeys.insert(
        {
          customerId: previous.customerId,
          name: previous.name,
          prefix: generated.prefix,
          keyHash: generated.hash,
          scope: previous.scope,
          expiresAt: previous.expiresAt,
        },
        transaction,
      );
      previous.replacedById = apiKey.id;
      if (previous.expiresAt === null || previous.expiresAt > graceEnd) previous.expiresAt = graceEnd;
      await this.apiKeys.markReplaced(previous, apiKey.id, previous.expiresAt, transaction);
      await publishInvalidation(transaction, `apikey:${previous.prefix}`);
      await publishInvalidation(transaction, `apikey:${generated.prefix}`);
      return { apiKey, key: generated.key, previous };
    });
    this.cache.invalidate(`apikey:${previous.prefix}`);
    this.cache.invalidate(`apikey:${generated.prefix}`);
    return result;
  }

  /** The key's identity if it exists, matches, and is neither revoked nor expired; else null. */
  async authenticate(key: string): Promise<AuthenticatedKey | null> {
    const prefix = prefixOf(key);
    if (prefix === undefined) return null;
    const record = await this.cache.get(`apikey:${prefix}`, () => this.load(prefix));
    if (!record || !apiKeyMatches(key, record.keyHash)) return null;
    const now = this.clock.nowMs();
    if (record.revokedAtMs !== null && record.revokedAtMs <= now) return null;
    if (record.expiresAtMs !== null && record.expiresAtMs <= now) return null;
    this.touch(record, now);
    return { id: record.id, customerId: record.customerId, scope: record.scope };
  }

  private async find(id: number): Promise<ApiKey> {
    const apiKey = await this.apiKeys.findById(id);
    if (!apiKey) throw ApiError.notFound(`API key ${id} does not exist.`);
    return apiKey;
  }

  private async load(prefix: string): Promise<KeyRecord | null> {
    const apiKey = await this.apiKeys.findByPrefix(prefix);
    if (!apiKey) return null;
    return {
      id: apiKey.id,
      customerId: apiKey.customerId,
      scope: apiKey.scope,
      keyHash: apiKey.keyHash,
      expiresAtMs: apiKey.expiresAt?.getTime() ?? null,
      revokedAtMs: apiKey.revokedAt?.getTime() ?? null,
    };
  }

  /** Records use at most once a minute per key, off the request's path. */
  private touch(record: KeyRecord, now: number): void {
    if (!this.lastUsedWrites.due(record.id, now)) return;
    this.apiKeys
      .recordUse(record, new Date(now))
      .catch((error: unknown) => this.logger.warn({ err: error, api_key: record.id }, 'could not record API key use'));
  }
}
