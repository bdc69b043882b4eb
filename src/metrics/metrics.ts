import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface PoolStats {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/**
 * The Prometheus registry of one application instance (not prom-client's global one, so that
 * several apps in one test process do not collide).
 */
export class Metrics {
  readonly registry = new Registry();

  readonly requestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  /** One per MCP tools/call, by tool and outcome (`ok` or the error code): what /mcp did, which the HTTP histogram cannot say. */
  readonly mcpToolCalls = new Counter({
    name: 'mcp_tool_calls_total',
    help: 'MCP tool calls by tool and outcome (ok, or the error code of the tool error).',
    labelNames: ['tool', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly mcpToolDuration = new Histogram({
    name: 'mcp_tool_call_duration_seconds',
    help: 'MCP tool call duration by tool.',
    labelNames: ['tool'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  /** Time a statement waited for a pool connection: the first sign that DATABASE_POOL_SIZE is too small. */
  readonly poolAcquireDuration = new Histogram({
    name: 'db_pool_acquire_seconds',
    help: 'Time to get a connection from the PostgreSQL pool.',
    buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [this.registry],
  });

  constructor(pool: () => PoolStats | undefined) {
    collectDefaultMetrics({ register: this.registry });
    const poolGauge = (name: string, help: string, read: (stats: PoolStats) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          const stats = pool();
          if (stats) this.set(read(stats));
        },
      });
    poolGauge('db_pool_connections_total', 'Open connections in the PostgreSQL pool.', (stats) => stats.totalCount);
    poolGauge('db_pool_connections_idle', 'Idle connections in the PostgreSQL pool.', (stats) => stats.idleCount);
    poolGauge('db_pool_requests_waiting', 'Queries waiting for a pool connection.', (stats) => stats.waitingCount);
  }

  /**
   * Counters of the credential cache, read from its running totals at scrape time, so the request
   * path only bumps an integer.
   */
  watchCredentialCache(stats: CacheStats): void {
    const counter = (name: string, help: string, read: () => number) => {
      let reported = 0;
      new Counter({
        name,
        help,
        registers: [this.registry],
        collect() {
          const total = read();
          this.inc(total - reported);
          reported = total;
        },
      });
    };
    counter('credential_cache_hits_total', 'Credential checks answered from the cache.', () => stats.hits);
    counter('credential_cache_misses_total', 'Credential checks that queried the database and were cached.', () => stats.misses);
    counter(
      'credential_cache_bypassed_total',
      'Credential checks that queried the database because the invalidation channel was down.',
      () => stats.bypassed,
    );
    counter('credential_cache_invalidations_total', 'Revocations received (NOTIFY or local).', () => stats.invalidations);
  }

  /** Times every pool checkout: wraps the pg Pool's connect(), in callback and promise form. */
  instrumentPool(pool: PgPoolLike): void {
    const connect = pool.connect.bind(pool) as (callback?: ConnectCallback) => unknown;
    const histogram = this.poolAcquireDuration;
    pool.connect = ((callback?: ConnectCallback) => {
      const started = performance.now();
      const observe = () => histogram.observe((performance.now() - started) / 1000);
      if (callback) {
        return connect((error, client, release) => {
          observe();
          callback(error, client, release);
        });
      }
      return (connect() as Promise<unknown>).then((client) => {
        observe();
        return client;
      });
    }) as PgPoolLike['connect'];
  }
}

export interface CacheStats {
  hits: number;
  misses: number;
  bypassed: number;
  invalidations: number;
}

type ConnectCallback = (error: Error | undefined, client: unknown, release: unknown) => void;

export interface PgPoolLike {
  connect: (...args: never[]) => unknown;
}
