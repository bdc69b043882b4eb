import { Server as NetServer } from 'node:net';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ClsServiceManager } from 'nestjs-cls';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { AppModule } from './app.module.js';
import { BODY_LIMIT_BYTES, registerJsonBodyParser } from './common/http/json-body-parser.js';
import { answerClientError, registerBodyDeadline } from './common/http/client-errors.js';
import { registerHostCheck } from './common/http/host-header.js';
import { registerQueryCheck } from './common/http/query-check.js';
import { registerSecurityHeaders, securityHeadersFor } from './common/http/security-headers.js';
import { MethodIndex } from './common/errors/method-index.js';
import { type ProblemBody, problemBody } from './common/errors/problem-body.js';
import { openRequestContext } from './common/tenancy/request-context.js';
import { TenantContext } from './common/tenancy/tenant-context.js';
import { WorkspacePoolShare } from './common/tenancy/workspace-pool-share.js';
import { Clock } from './common/time/clock.js';
import type { AppConfig } from './config/app-config.js';
import { NestPinoLogger } from './logging/nest-logger.js';
import { InFlightRequests, registerRequestHooks, requestIdOf } from './logging/request-hooks.js';
import { Metrics, type PgPoolLike } from './metrics/metrics.js';
import type { CredentialCache } from './common/credential-cache/credential-cache.js';
import { CREDENTIAL_CACHE } from './common/credential-cache/credential-cache.token.js';
import { buildOpenApiDocument, mountApiDocs } from './openapi/openapi.js';
import { mountWebApp } from './web/web-app.js';

export interface CreateAppOptions {
  /** With `databaseUrl` set to a migrated database (main.ts resolves the embedded cluster's). */
  config: AppConfig;
  logger: Logger;
  /** Tests pass a SettableClock to expire tokens without sleeping. */
  clock?: Clock;
  /** Test hooks into the DataSource options (e.g. a query logger). */
  dataSourceOverrides?: Partial<DataSourceOptions>;
}

/** Checkouts of one workspace that may wait for its share at once; one more is refused at once (memory stays bounded). */
const MAX_WAITING_PER_WORKSPACE = 200;

/** The longest a client may take to send a request's head (its headers). */
const HEADERS_TIMEOUT_MS = 10_000;

/**
 * Builds the HTTP application on Fastify (chosen over Express: 2.4× the requests/s on the same
 * Nest controller, see docs/architecture.md). main.ts and the end-to-end tests both use this, so
 * the tests exercise exactly what production serves.
 */
export async function createApp({
  config,
  logger,
  clock = new Clock(),
  dataSourceOverrides,
}: CreateAppOptions): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    requestIdHeader: false,
    genReqId: requestIdOf,
    logger: false,
    // Whose X-Forwarded-* is believed: TRUSTED_PROXIES only, never implied by PUBLIC_BASE_URL.
    trustProxy: trustProxyOf(config.trustedProxies),
    return503OnClosing: true,
    // A slow or stalled client may not hold a connection for long (issue 25: a trickling body was
    // held for over 330 s): Node bounds the head (checked every `connectionsCheckingInterval`), and
    // registerBodyDeadline the body, except a streamed upload's. Node's own whole-request deadline
    // is off, since it would cut a large import short.
    requestTimeout: 0,
    http: { headersTimeout: Math.min(HEADERS_TIMEOUT_MS, config.requestTimeoutMs), connectionsCheckingInterval: 1000 },
    clientErrorHandler: answerClientError(config.requestTimeoutMs),
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
      answerRouterError(error, request, reply, logger),
  });
  const fastify = adapter.getInstance();
  const methods = new MethodIndex();
  // A wildcard route (Swagger UI's files) answers 404 for a file it does not have: indexing it
  // would turn every unknown path under it into a 405 that lists GET.
  fastify.addHook('onRoute', (route) => {
    if (!route.url.endsWith('*')) methods.add(route.method, route.url);
  });
  registerJsonBodyParser(fastify);
  registerHostCheck(fastify);
  registerBodyDeadline(fastify, config.requestTimeoutMs);
  registerQueryCheck(fastify);
  registerSecurityHeaders(fastify);
  // The pool gauges read the DataSource that Nest builds below.
  const database: { dataSource?: DataSource } = {};
  const metrics = new Metrics(() => (database.dataSource ? poolStats(database.dataSource) : undefined));
  const inFlight = new InFlightRequests();
  registerRequestHooks(fastify, logger, metrics, inFlight);
  openRequestContext(fastify, ClsServiceManager.getClsService());

  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({ config, logger, metrics, clock, methods, dataSourceOverrides }),
    adapter,
    {
      logger: new NestPinoLogger(logger),
      bodyParser: false,
      abortOnError: false,
    },
  );
  const dataSource = app.get(DataSource);
  database.dataSource = dataSource;
  const pool = (dataSource.driver as unknown as { master?: PgPoolLike }).master;
  if (pool) {
    // One workspace holds at most its share of the pool (issue 25, item 2); the checkout metric includes the wait for it.
    const tenants = app.get(TenantContext);
    new WorkspacePoolShare({
      share: config.workspacePoolShare,
      maxWaitMs: config.workspacePoolWaitMs,
      maxWaiting: MAX_WAITING_PER_WORKSPACE,
      workspaceOf: () => tenants.workspaceId(),
    }).guard(pool);
    metrics.instrumentPool(pool);
  }
  metrics.watchCredentialCache(app.get<CredentialCache>(CREDENTIAL_CACHE).stats);
  if (config.corsOrigins.length > 0) app.enableCors(corsOptions(config.corsOrigins));
  mountApiDocs(app, buildOpenApiDocument(app));
  await mountWebApp(fastify);
  await app.init();
  IN_FLIGHT.set(app, inFlight);
  return app;
}

/**
 * Fastify's router answers a malformed URL (bad percent-encoding) and a path parameter longer than
 * maxParamLength itself, before any hook or exception filter runs; these answers keep the shape of
 * SPEC section 5 and the request id. An over-long parameter can name no object (ids are integers),
 * so it is a 404 like any other id that does not exist (docs/api-conventions.md).
 */
function answerRouterError(error: FastifyError, request: FastifyRequest, reply: FastifyReply, logger: Logger): void {
  const requestId = String(request.id);
  const body = routerProblem(error, requestId);
  if (body.status >= 500) logger.error({ err: error, request_id: requestId, method: request.method }, 'router error');
  // No request hook runs for these requests, so their one log line is written here.
  logger.info({ request_id: requestId, method: request.method, route: null, status: body.status, error: error.code }, 'request');
  void reply
    .status(body.status)
    .headers(securityHeadersFor(request.url))
    .header('x-request-id', requestId)
    .type('application/problem+json')
    .send(body);
}

function routerProblem(error: FastifyError, requestId: string): ProblemBody {
  if (error.code === 'FST_ERR_BAD_URL') return problemBody(400, 'parse_error', 'Malformed URL.', requestId);
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return problemBody(404, 'not_found', 'Not found.', requestId);
  // FST_ERR_ASYNC_CONSTRAINT: no route here has an asynchronous constraint, so this is a fault.
  return problemBody(500, 'internal_error', 'An internal error occurred. Quote the request id when you report it.', requestId);
}

/** TRUSTED_PROXIES as Fastify's trustProxy: a hop count means the nearest `hops` proxies are believed. */
function trustProxyOf(trusted: AppConfig['trustedProxies']): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (trusted === false) return false;
  if (typeof trusted === 'number') return (_address, hop) => hop < trusted;
  return [...trusted];
}

/**
 * CORS for the origins in CORS_ORIGINS only (off when it is empty): browsers there may send the
 * API's headers and read the ones it answers with. API credentials travel in the Authorization
 * header, never in cookies, so no `Access-Control-Allow-Credentials` (the web interface's session
 * cookie is same-origin only: src/web/session-cookie.ts).
 */
function corsOptions(origins: readonly string[]) {
  return {
    origin: [...origins],
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id', 'Accept', 'Mcp-Protocol-Version'],
    exposedHeaders: ['X-Request-Id', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'Idempotent-Replayed', 'WWW-Authenticate', 'Allow'],
    maxAge: 600,
    strictPreflight: true,
  };
}

const IN_FLIGHT = new WeakMap<NestFastifyApplication, InFlightRequests>();

/**
 * How long, once in-flight requests are answered, a kept-alive connection may stay quiet before the
 * shutdown closes it. A client busy on it sends its next request as soon as it has the last answer,
 * well within this, and is answered (with `Connection: close`) instead of finding the connection
 * gone; only one quiet this long is closed under it, as a keep-alive timeout would.
 */
const KEEP_ALIVE_LINGER_MS = 500;

/**
 * The SIGTERM path (SPEC section 9; issue 25, item 7): stop accepting connections; from now on every
 * answer carries `Connection: close` (those in flight included, unless their head is already out),
 * so Node ends each connection once its last answer is flushed; let every request already in flight
 * finish (at most `timeoutMs`); then close the connections left quiet; then close the application,
 * whose shutdown hooks close the pool. Open connections are not closed at once: one that has just
 * been answered may already carry the client's next request, which would meet a reset. Nest's own
 * close() alone would close the pool while a request still needs it. Returns false when requests
 * were still running at the deadline (their connections are then cut).
 */
export async function closeGracefully(app: NestFastifyApplication, timeoutMs: number): Promise<boolean> {
  const server = app.getHttpServer();
  const deadline = Date.now() + timeoutMs;
  IN_FLIGHT.get(app)?.beginClosing();
  // net.Server#close: no new connections, and the open ones left alone. http.Server#close would
  // also drop the idle keep-alive ones at once (Node 19+), resetting a request already on its way.
  const allClosed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  const drained = await (IN_FLIGHT.get(app)?.drained(timeoutMs) ?? Promise.resolve(true));
  let cut = !drained;
  if (drained) {
    // Requests arriving now on open connections are answered with Connection: close, which ends
    // their connection; what stays quiet through the linger is closed under it.
    await untilNoConnections(server, Math.min(KEEP_ALIVE_LINGER_MS, Math.max(0, deadline - Date.now())));
    server.closeIdleConnections();
  }
  const backstop = setTimeout(
    () => {
      cut = true;
      server.closeAllConnections();
    },
    Math.max(0, deadline - Date.now()),
  );
  if (cut) server.closeAllConnections();
  await allClosed;
  clearTimeout(backstop);
  await app.close();
  return !cut;
}

/** Resolves once the server has no connection left, or after `ms`. */
async function untilNoConnections(server: NetServer, ms: number): Promise<void> {
  const until = Date.now() + ms;
  const count = () => new Promise<number>((resolve) => server.getConnections((error, n) => resolve(error ? 0 : n)));
  while (Date.now() < until && (await count()) > 0) await new Promise((resolve) => setTimeout(resolve, 20));
}

function poolStats(dataSource: DataSource) {
  const pool = (dataSource.driver as unknown as { master?: { totalCount: number; idleCount: number; waitingCount: number } }).master;
  return pool ? { totalCount: pool.totalCount, idleCount: pool.idleCount, waitingCount: pool.waitingCount } : undefined;
}
