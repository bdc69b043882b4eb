import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

  /** Job runs by queue, job and outcome (`succeeded` or `failed`): how long each try took. */
  readonly jobDuration = new Histogram({
    name: 'job_duration_seconds',
    help: 'Background job run duration by queue, job and outcome.',
    labelNames: ['queue', 'job', 'outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900],
    registers: [this.registry],
  });

  /** Tries that failed and will be tried again (with backoff). */
  readonly jobRetries = new Counter({
    name: 'job_retries_total',
    help: 'Failed job tries that will be retried, by queue and job.',
    labelNames: ['queue', 'job'] as const,
    registers: [this.registry],
  });

  /** Jobs that failed their last try and will not run again. */
  readonly jobFailures = new Counter({
    name: 'job_failures_total',
    help: 'Jobs failed for good (last attempt failed), by queue and job.',
    labelNames: ['queue', 'job'] as const,
    registers: [this.registry],
  });

  /** Audience members the platforms accepted (SPEC 10.6, "rows sent per platform"), by platform and operation (`add`, `remove`). */
  readonly syncMembersSent = new Counter({
    name: 'sync_members_sent_total',
    help: 'Audience members accepted by an ad platform, by platform and operation.',
    labelNames: ['platform', 'operation'] as const,
    registers: [this.registry],
  });

  /** Platform answers that asked the sync to slow down (HTTP 429, RESOURCE_EXHAUSTED, Meta throttling codes), by platform. */
  readonly syncThrottled = new Counter({
    name: 'sync_platform_throttled_total',
    help: 'Audience sync requests an ad platform throttled, by platform.',
    labelNames: ['platform'] as const,
    registers: [this.registry],
  });

  /** Finished sync runs by platform and final status. */
  readonly syncRuns = new Counter({
    name: 'sync_runs_total',
    help: 'Audience sync runs finished, by platform and status.',
    labelNames: ['platform', 'status'] as const,
    registers: [this.registry],
  });

  /** Signal events a platform accepted (SPEC 10.4), by platform. */
  readonly signalEventsSent = new Counter({
    name: 'signal_events_sent_total',
    help: 'Signal events delivered to an ad platform, by platform.',
    labelNames: ['platform'] as const,
    registers: [this.registry],
  });

  /** Signal events that will not be delivered (refused, out of the platform's window, out of tries), by platform. */
  readonly signalEventsFailed = new Counter({
    name: 'signal_events_failed_total',
    help: 'Signal events failed for good, by platform.',
    labelNames: ['platform'] as const,
    registers: [this.registry],
  });

  /** Signal delivery requests a platform throttled (429, RESOURCE_EXHAUSTED, Meta throttling codes), by platform. */
  readonly signalEventsThrottled = new Counter({
    name: 'signal_delivery_throttled_total',
    help: 'Signal delivery requests throttled by an ad platform, by platform.',
    labelNames: ['platform'] as const,
    registers: [this.registry],
  });

  /** Webhook deliveries that ended (SPEC 10.5), by event type and outcome (`succeeded`, or `failed` for good). */
  readonly webhookDeliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook deliveries that ended, by event type and outcome (succeeded, failed).',
    labelNames: ['event_type', 'outcome'] as const,
    registers: [this.registry],
  });

  /** Every try of a webhook delivery, retries included, by event type and outcome. */
  readonly webhookAttempts = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts, retries included, by event type and outcome (succeeded, failed).',
    labelNames: ['event_type', 'outcome'] as const,
    registers: [this.registry],
  });

  private jobQueueDepth: (() => Promise<Map<string, number>>) | undefined;

  constructor(pool: () => PoolStats | undefined) {
    collectDefaultMetrics({ register: this.registry });
    // prom-client's default set names three gauges like counters, which promtool refuses; the
    // same figures stay available per type (nodejs_active_handles, …).
    for (const name of ['nodejs_active_resources_total', 'nodejs_active_handles_total', 'nodejs_active_requests_total'])
      this.registry.removeSingleMetric(name);
    new Gauge({
      name: 'build_info',
      help: 'Always 1; the labels say which build and Node version serve.',
      labelNames: ['version', 'node'] as const,
      registers: [this.registry],
    }).set({ version: SERVICE_VERSION, node: process.version }, 1);
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
    // A gauge: no `_total` suffix, which Prometheus reserves for counters (promtool checks it).
    poolGauge('db_pool_connections', 'Open connections in the PostgreSQL pool.', (stats) => stats.totalCount);
    poolGauge('db_pool_connections_idle', 'Idle connections in the PostgreSQL pool.', (stats) => stats.idleCount);
    poolGauge('db_pool_requests_waiting', 'Queries waiting for a pool connection.', (stats) => stats.waitingCount);
    const depth = () => this.jobQueueDepth;
    new Gauge({
      name: 'job_queue_depth',
      help: 'Jobs waiting or running, by queue (read from the job tables at scrape time; only in processes that run workers).',
      labelNames: ['queue'] as const,
      registers: [this.registry],
      async collect() {
        const read = depth();
        if (!read) return;
        // A scrape while the database is away keeps the last figures rather than failing /metrics.
        const counts = await read().catch(() => undefined);
        if (!counts) return;
        this.reset();
        for (const [queue, count] of counts) this.set({ queue }, count);
      },
    });
  }

  /** Where the queue-depth gauge reads from: the job runner, once it has started. */
  watchJobQueues(read: (() => Promise<Map<string, number>>) | undefined): void {
    this.jobQueueDepth = read;
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

/**
 * The service's version from its package.json, found by walking up from this file: the same
 * lookup works from src/ under the tests and from dist/src/ in a build or an image.
 */
function serviceVersion(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 5; depth++) {
    const manifest = join(folder, 'package.json');
    if (existsSync(manifest)) {
      const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (name === 'audience-signal-platform-api' && version) return version;
    }
    folder = dirname(folder);
  }
  return 'unknown';
}

const SERVICE_VERSION = serviceVersion();
