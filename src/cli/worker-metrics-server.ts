import { createServer, type Server } from 'node:http';
import type { AppConfig } from '../config/app-config.js';
import { bearerMatches } from '../health/health.controller.js';
import type { Metrics } from '../metrics/metrics.js';

/**
 * audience-worker's only HTTP: `/metrics` (job durations, retries and failures are counted where
 * the jobs run) under the same rule as the API's (METRICS_TOKEN bearer; 404 in production without
 * one), and `/healthz` for the container's health check.
 */
export function startWorkerMetricsServer(config: AppConfig, metrics: Metrics, port: number): Promise<Server> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || (path !== '/metrics' && path !== '/healthz')) {
      response.writeHead(404).end();
      return;
    }
    if (path === '/healthz') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    const token = config.metricsToken;
    if (token === undefined && config.nodeEnv === 'production') {
      response.writeHead(404).end();
      return;
    }
    if (token !== undefined && !bearerMatches(request.headers.authorization, token)) {
      response.writeHead(401, { 'www-authenticate': 'Bearer realm="metrics"' }).end();
      return;
    }
    metrics.registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' }).end(text),
      () => response.writeHead(500).end(),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, config.host, () => resolve(server));
  });
}
