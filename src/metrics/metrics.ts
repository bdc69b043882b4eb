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
}
