/**
 * PostgreSQL error classification, for turning constraint races into the documented 400/409, and
 * dependency outages (database, Redis) into the 503 of SPEC section 8.
 */
interface PgError {
  code?: string;
  constraint?: string;
  driverError?: { code?: string; constraint?: string };
}

function pg(error: unknown): { code?: string; constraint?: string } {
  const candidate = error as PgError | null;
  return candidate?.driverError ?? candidate ?? {};
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const { code, constraint: name } = pg(error);
  return code === '23505' && (constraint === undefined || name === constraint);
}

export function isForeignKeyViolation(error: unknown, constraint?: string): boolean {
  const { code, constraint: name } = pg(error);
  return code === '23503' && (constraint === undefined || name === constraint);
}

export function constraintOf(error: unknown): string | undefined {
  return pg(error).constraint;
}

/** A service the API cannot answer without. */
export type Dependency = 'database' | 'redis';

/**
 * A connection-level failure of a dependency, for code that knows which one it talked to (the
 * Redis rate limiter wraps its errors in it: a bare ECONNREFUSED does not say whose port it was).
 */
export class DependencyUnavailableError extends Error {
  constructor(
    readonly dependency: Dependency,
    cause: unknown,
  ) {
    super(`${dependency} unavailable`, { cause });
    this.name = 'DependencyUnavailableError';
  }
}

/** Socket errors of `net`/`dns`, as pg (and ioredis) pass them on: the server is not there. */
const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);

/**
 * SQLSTATEs that mean "this server cannot serve you now", not "your statement is wrong": class 08
 * (connection exception) is matched by prefix; 57P01 admin_shutdown, 57P02 crash_shutdown,
 * 57P03 cannot_connect_now (starting up, recovering), 53300 too_many_connections.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/**
 * pg and pg-pool raise these as plain Errors without a code (messages from pg 8.x, seen by cutting
 * a TCP proxy in front of PostgreSQL): a pool that found no connection within
 * connectionTimeoutMillis; a socket closed under a query ("Connection terminated unexpectedly"),
 * by `end()` ("Connection terminated") or by the connect timeout ("Connection terminated due to
 * connection timeout"); a client whose connection already failed.
 */
const DATABASE_MESSAGES = [
  /^timeout exceeded when trying to connect$/,
  /^Connection terminated\b/,
  /^Client has encountered a connection error and is not queryable$/,
];

/**
 * ioredis (5.x): a command that was sent and lost its connection (MaxRetriesPerRequestError), one
 * refused while disconnected because the offline queue is off (src/redis/redis.ts), one on a
 * connection that was closed.
 */
const REDIS_MESSAGES = new Set(['Connection is closed.', "Stream isn't writeable and enableOfflineQueue options is false"]);

/**
 * TypeORM releases a query runner when its connection emits an error, so a transaction whose
 * connection died between two statements fails with one of these, not with the socket error.
 * Nothing here releases a runner it still uses, so they mean a lost connection.
 */
const TYPEORM_RELEASED = new Set(['QueryRunnerAlreadyReleasedError', 'QueryRunnerProviderAlreadyReleasedError']);

interface ErrorShape {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  driverError?: unknown;
  errors?: unknown;
}

/**
 * Which dependency an error says is down, or undefined when it is anything else (a bad statement,
 * a constraint, a bug). Looks at the error, TypeORM's `driverError` under a QueryFailedError, and
 * the attempts of an AggregateError (Node's connect to every address of a host name). It does not
 * follow `cause`: fetch() to an ad platform fails with a TypeError whose cause is an ECONNRESET,
 * and that is no database outage.
 */
export function unavailableDependency(error: unknown, depth = 0): Dependency | undefined {
  if (error instanceof DependencyUnavailableError) return error.dependency;
  if (typeof error !== 'object' || error === null || depth > 3) return undefined;
  const { name, message, code, driverError, errors } = error as ErrorShape;
  if (name === 'MaxRetriesPerRequestError' || (typeof message === 'string' && REDIS_MESSAGES.has(message))) return 'redis';
  if (typeof code === 'string' && (CONNECTION_ERROR_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) {
    return 'database';
  }
  if (typeof name === 'string' && TYPEORM_RELEASED.has(name)) return 'database';
  if (typeof message === 'string' && DATABASE_MESSAGES.some((pattern) => pattern.test(message))) return 'database';
  if (driverError !== undefined) return unavailableDependency(driverError, depth + 1);
  if (Array.isArray(errors)) {
    for (const attempt of errors) {
      const dependency = unavailableDependency(attempt, depth + 1);
      if (dependency) return dependency;
    }
  }
  return undefined;
}

/** True when the error is a database or Redis outage: the answer is 503, never 401 or 500 (SPEC section 8). */
export function isDependencyUnavailable(error: unknown): boolean {
  return unavailableDependency(error) !== undefined;
}

/** How long a client is asked to wait (Retry-After) when a dependency is down; see docs/reliability.md. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 5;

/** What the client reads in the 503 body or MCP tool error. */
export const DEPENDENCY_UNAVAILABLE_DETAIL: Record<Dependency, string> = {
  database: 'The database is temporarily unavailable. Try again shortly.',
  redis: 'A service the API depends on is temporarily unavailable. Try again shortly.',
};
