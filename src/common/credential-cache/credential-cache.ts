import pg from 'pg';
import type { Logger } from 'pino';
import { entityManagerOf, type Transaction } from '../tenancy/transactions.js';

/** PostgreSQL channel on which revocations are announced to every server process. */
export const INVALIDATION_CHANNEL = 'auth_invalidation';

/**
 * What can change about a credential after it was cached: `session:<uuid>` (logout, refresh
 * reuse), `user:<id>` (deactivation), `apikey:<prefix>` (create, revoke, rotate),
 * `mcptoken:<prefix>` (create, revoke).
 */
export type InvalidationMessage = `session:${string}` | `user:${number}` | `apikey:${string}` | `mcptoken:${string}`;

/** Announces a change inside the transaction that makes it: PostgreSQL delivers it only if the transaction commits. */
export async function publishInvalidation(transaction: Transaction, message: InvalidationMessage): Promise<void> {
  await entityManagerOf(transaction).query('SELECT pg_notify($1, $2)', [INVALIDATION_CHANNEL, message]);
}

interface Entry<V> {
  value: V;
  expiresAtMs: number;
}

/**
 * A small cache of credential checks (session and user state, API key rows) so an authenticated
 * request costs no query on a hit. It is correct only while its LISTEN connection is up: every
 * revocation is NOTIFYed in the transaction that makes it, each process evicts on receipt, and
 * while the connection is down the cache is bypassed (every check queries). A generation counter
 * stops a load that raced with an invalidation from caching the stale value.
 */
export class CredentialCache {
  /** Running totals for the metrics (`credential_cache_*`): plain counters, read at scrape time. */
  readonly stats = { hits: 0, misses: 0, bypassed: 0, invalidations: 0 };
  private readonly entries = new Map<string, Entry<unknown>>();
  private client: pg.Client | undefined;
  private listening = false;
  private stopped = false;
  private generation = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly databaseUrl: string | undefined,
    private readonly logger: Logger,
    private readonly options: { ttlMs: number; maxEntries: number } = { ttlMs: 5 * 60_000, maxEntries: 50_000 },
  ) {}

  onModuleInit(): Promise<void> {
    return this.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  async start(): Promise<void> {
    if (!this.databaseUrl) return;
    await this.connect().catch(() => this.scheduleReconnect());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    this.listening = false;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  /** True while the LISTEN connection is up, i.e. while cached entries can be trusted. */
  get isListening(): boolean {
    return this.listening;
  }

  /** Cached value for `key`, else `load()`'s, cached only if nothing was invalidated meanwhile. */
  async get<V>(key: string, load: () => Promise<V>): Promise<V> {
    if (!this.listening) {
      this.stats.bypassed++;
      return load();
    }
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAtMs > now) {
      this.stats.hits++;
      return hit.value as V;
    }
    this.stats.misses++;
    const generation = this.generation;
    const value = await load();
    if (this.listening && generation === this.generation) {
      if (this.entries.size >= this.options.maxEntries) this.entries.clear();
      this.entries.set(key, { value, expiresAtMs: now + this.options.ttlMs });
    }
    return value;
  }

  /** Evicts at once in this process; other processes hear it through NOTIFY. */
  invalidate(message: string): void {
    this.generation++;
    this.stats.invalidations++;
    const [kind, id] = splitMessage(message);
    if (kind === 'user') {
      // Sessions and MCP tokens are cached by their own keys; drop every one of that user.
      for (const [key, entry] of this.entries) {
        if ((entry.value as { userId?: number } | null)?.userId === Number(id)) this.entries.delete(key);
      }
    } else {
      this.entries.delete(message);
    }
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'audience-platform-listener' });
    client.on('notification', (notification) => {
      if (notification.channel === INVALIDATION_CHANNEL && notification.payload) this.invalidate(notification.payload);
    });
    const lost = () => {
      if (this.client !== client) return;
      this.client = undefined;
      this.goDeaf();
      this.scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      await client.query(`LISTEN ${INVALIDATION_CHANNEL}`);
    } catch (error) {
      // A connection that came up but could not LISTEN (the database went away in between) is closed, not leaked.
      await client.end().catch(() => {});
      throw error;
    }
    if (this.stopped) {
      await client.end();
      return;
    }
    this.client = client;
    // Anything cached before this connection may have missed a notification.
    this.entries.clear();
    this.generation++;
    this.listening = true;
  }

  private goDeaf(): void {
    this.listening = false;
    this.entries.clear();
    this.generation++;
    this.logger.warn('credential cache: LISTEN connection lost; checking every credential in the database until it is back');
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect().catch(() => this.scheduleReconnect());
    }, 1000);
    this.reconnectTimer.unref();
  }
}

function splitMessage(message: string): [string, string] {
  const colon = message.indexOf(':');
  return colon < 0 ? [message, ''] : [message.slice(0, colon), message.slice(colon + 1)];
}
