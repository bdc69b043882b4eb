import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ClsServiceManager } from 'nestjs-cls';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { AppModule } from './app.module.js';
import { BODY_LIMIT_BYTES, registerJsonBodyParser } from './common/http/json-body-parser.js';
import { registerQueryCheck } from './common/http/query-check.js';
import { MethodIndex } from './common/errors/method-index.js';
import { openRequestContext } from './common/tenancy/request-context.js';
import { Clock } from './common/time/clock.js';
import type { AppConfig } from './config/app-config.js';
import { NestPinoLogger } from './logging/nest-logger.js';
import { InFlightRequests, registerRequestHooks, requestIdOf } from './logging/request-hooks.js';
import { Metrics } from './metrics/metrics.js';
import { buildOpenApiDocument, mountApiDocs } from './openapi/openapi.js';

export interface CreateAppOptions {
  /** With `databaseUrl` set to a migrated database (main.ts resolves the embedded cluster's). */
  config: AppConfig;
  logger: Logger;
  redis?: Redis | null;
  /** Tests pass a SettableClock to expire tokens without sleeping. */
  clock?: Clock;
  /** Test hooks into the DataSource options (e.g. a query logger). */
  dataSourceOverrides?: Partial<DataSourceOptions>;
}

/**
 * Builds the HTTP application on Fastify (chosen over Express: 2.4× the requests/s on the same
 * Nest controller, see docs/architecture.md). main.ts and the end-to-end tests both use this, so
 * the tests exercise exactly what production serves.
 */
export async function createApp({
  config,
  logger,
  redis = null,
  clock = new Clock(),
  dataSourceOverrides,
}: CreateAppOptions): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    requestIdHeader: false,
    genReqId: requestIdOf,
    logger: false,
    trustProxy: config.publicBaseUrl !== undefined,
    return503OnClosing: true,
  });
  const fastify = adapter.getInstance();
  const methods = new MethodIndex();
  fastify.addHook('onRoute', (route) => methods.add(route.method, route.url));
  registerJsonBodyParser(fastify);
  registerQueryCheck(fastify);
  // The pool gauges read the DataSource that Nest builds below.
  const database: { dataSource?: DataSource } = {};
  const metrics = new Metrics(() => (database.dataSource ? poolStats(database.dataSource) : undefined));
  const inFlight = new InFlightRequests();
  registerRequestHooks(fastify, logger, metrics, inFlight);
  openRequestContext(fastify, ClsServiceManager.getClsService());

  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({ config, logger, metrics, redis, clock, methods, dataSourceOverrides }),
    adapter,
    {
      logger: new NestPinoLogger(logger),
      bodyParser: false,
      abortOnError: false,
    },
  );
  database.dataSource = app.get(DataSource);
  mountApiDocs(app, buildOpenApiDocument(app));
  await app.init();
  IN_FLIGHT.set(app, inFlight);
  return app;
}

const IN_FLIGHT = new WeakMap<NestFastifyApplication, InFlightRequests>();

/**
 * The SIGTERM path (SPEC section 9): stop accepting connections, let every request already in
 * flight finish (at most `timeoutMs`), then close the application, whose shutdown hooks close the
 * pool. Nest's own close() alone would close the pool while a request still needs it.
 * Returns false when requests were still running at the deadline.
 */
export async function closeGracefully(app: NestFastifyApplication, timeoutMs: number): Promise<boolean> {
  const server = app.getHttpServer();
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const drained = await (IN_FLIGHT.get(app)?.drained(timeoutMs) ?? Promise.resolve(true));
  // Connections whose requests have just been answered are idle keep-alives now.
  if (drained) server.closeIdleConnections();
  else server.closeAllConnections();
  await stopped;
  await app.close();
  return drained;
}

function poolStats(dataSource: DataSource) {
  const pool = (dataSource.driver as unknown as { master?: { totalCount: number; idleCount: number; waitingCount: number } }).master;
  return pool ? { totalCount: pool.totalCount, idleCount: pool.idleCount, waitingCount: pool.waitingCount } : undefined;
}
