import { createSecretKey, type KeyObject, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import secureJsonParse from 'secure-json-parse';
import { POOL_SIZE } from './settings.js';
import {
  API_KEY,
  API_KEY_SQL,
  AUTHORIZATION,
  CachedRows,
  keyAdmits,
  type KeyRow,
  RequestCounter,
  SESSION_SQL,
  sessionAdmits,
  type SessionRow,
} from './ceiling-parts.js';
import { BenchProblem, ReadAnswers, SIGNAL_WRITE_STATEMENTS, signalJson } from './read-answers.js';
import { WRITE_STATEMENTS, WriteAnswers } from './write-answers.js';

/**
 * THE CEILING: the least a Node.js process can do to answer the benchmark's requests correctly,
 * written by hand on node:http and pg, so that service/ceiling says how much the framework stack
 * (Nest, Fastify, passport, class-validator, TypeORM) costs on top of the unavoidable work.
 *
 * It does the same work as the service, not less:
 * - the same credential checks: HS256 JWT with the same secret and issuer (jsonwebtoken, as the
 *   service), claims and expiry, the session row loaded with the service's query and kept in a Map
 *   (the service caches it too); API keys looked up by prefix, SHA-256 compared in constant time,
 *   also cached. The secret is handed to jsonwebtoken as a KeyObject made once: given a string,
 *   jsonwebtoken 9 first tries createPublicKey() on it and catches the failure, ~0.45 ms of CPU
 *   per verification that buys nothing (docs/benchmarks.md);
 * - a per-identity fixed-window request counter and the same response headers;
 * - the same SQL as the service, captured from it, so the database does the same work: the lists
 *   and the detail through bench/read-answers.ts (shared with the floor: count and page in one
 *   statement, each signal with its delivery counts), as named prepared statements like the service's;
 *   PATCH and POST in a transaction with the same reference checks and the same extra reads;
 * - the same JSON envelope and fields.
 * What it leaves out is what a framework adds: routing tables, DI, guards, pipes, validation
 * decorators, entity hydration, hooks, metrics.
 *
 * Run as its own process (like the service), pinned to the same core: `node dist/bench/ceiling.js`
 * with CEILING_PORT, DATABASE_URL, JWT_SECRET and JWT_ISSUER.
 */

const CONNECTION_COLUMNS =
  `"connection"."customer_id" AS "connection_customer_id", "connection"."id" AS "connection_id", ` +
  `"connection"."created_at" AS "connection_created_at", "connection"."updated_at" AS "connection_updated_at", ` +
  `"connection"."platform" AS "connection_platform", "connection"."external_account_id" AS "connection_external_account_id", ` +
  `"connection"."account_name" AS "connection_account_name", "connection"."status" AS "connection_status", ` +
  `"connection"."scopes" AS "connection_scopes", "connection"."connected_by" AS "connection_connected_by", ` +
  `"connection"."token_expires_at" AS "connection_token_expires_at", "connection"."last_refreshed_at" AS "connection_last_refreshed_at"`;

const SQL = {
  session: SESSION_SQL,
  apiKey: API_KEY_SQL,
  // TypeORM's save() reloads the row before its UPDATE; the ceiling pays for that read too.
  signalUpdateDescription: `UPDATE "signals" SET "description" = $1, "updated_at" = CURRENT_TIMESTAMP WHERE ((("customer_id" = $2 AND "id" = $3))) RETURNING "updated_at"`,
  signalInsert: `INSERT INTO "signals"("customer_id", "created_at", "updated_at", "name", "description", "signal_type", "status", "model_instance_id", "audience_id", "connection_id", "config") VALUES ($1, DEFAULT, DEFAULT, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING "id", "created_at", "updated_at", "description", "status", "config"`,
  modelExists: `SELECT "model"."id" AS "id" FROM "ai_model_instances" "model" WHERE "model"."customer_id" = $1 AND "model"."id" IN ($2)`,
  audienceExists: `SELECT "audience"."id" AS "id" FROM "audiences" "audience" WHERE "audience"."customer_id" = $1 AND "audience"."id" IN ($2)`,
  connectionById: `SELECT ${CONNECTION_COLUMNS} FROM "connections" "connection" WHERE "connection"."customer_id" = $1 AND "connection"."id" = $2`,
};

const statementNames = new Map<string, string>();

/**
 * The statements the service sends as named prepared statements (lists and reads by id,
 * src/database/prepared-statements.ts) go named here too, so PostgreSQL does the same work for both.
 */
function named(text: string): pg.QueryConfig {
  let name = statementNames.get(text);
  if (name === undefined) statementNames.set(text, (name = `c${statementNames.size + 1}`));
  return { name, text };
}

interface Identity {
  key: string;
  customerId: number;
  canWrite: boolean;
}

const NAMED_WRITES = new Set(WRITE_STATEMENTS);

const SIGNAL_TYPES = new Set(['conversion', 'value', 'score']);

class Ceiling {
  private readonly sessions = new CachedRows<SessionRow>(
    async (sid) => (await this.pool.query<SessionRow>(SQL.session, [sid])).rows[0] ?? null,
  );
  private readonly keys = new CachedRows<KeyRow>(async (prefix) => (await this.pool.query<KeyRow>(SQL.apiKey, [prefix])).rows[0] ?? null);
  private readonly counter: RequestCounter;
  private readonly reads = new ReadAnswers(async (sql, parameters) => (await this.pool.query(named(sql), parameters)).rows);
  // Named as the service names them: the reads by id; the batch's, the INSERT's and add_job's text goes unnamed.
  private readonly writes = new WriteAnswers(
    async (sql, parameters) => (await this.pool.query(NAMED_WRITES.has(sql) ? named(sql) : sql, parameters)).rows,
    (work) =>
      this.transaction((client) =>
        work(async (sql, parameters) => (await client.query(NAMED_WRITES.has(sql) ? named(sql) : sql, parameters)).rows),
      ),
  );

  constructor(
    private readonly pool: pg.Pool,
    private readonly secret: KeyObject,
    private readonly issuer: string,
    rateLimit: number,
  ) {
    this.counter = new RequestCounter(rateLimit);
  }

  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    response.setHeader('x-request-id', requestId);
    try {
      const url = new URL(request.url ?? '/', `http://${request.headers.host ?? 'localhost'}/`);
      const path = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
      if (path === '/readyz/') {
        await this.pool.query('SELECT 1');
        return send(response, 200, { status: 'ok', checks: { database: 'ok' } });
      }
      const identity = await this.authenticate(request.headers.authorization);
      this.countRequest(identity, response);
      const method = request.method ?? 'GET';
      if (method !== 'GET' && !identity.canWrite) throw new BenchProblem(403, 'permission_denied', 'This API key is read-only.');

      if (path === '/api/v1/audiences/' && method === 'GET')
        return send(response, 200, await this.reads.listAudiences(identity.customerId, url));
      if (path === '/api/v1/signals/' && method === 'GET')
        return send(response, 200, await this.reads.listSignals(identity.customerId, url));
      if (path === '/api/v1/signals/' && method === 'POST')
        return send(response, 201, await this.createSignal(identity, await readJson(request)));
      if (path === '/api/v1/people/batch/' && method === 'POST')
        return send(response, 200, await this.writes.peopleBatch(identity.customerId, await readJson(request)));
      const events = /^\/api\/v1\/signals\/([^/]+)\/events\/$/.exec(path);
      if (events && method === 'POST')
        return send(response, 202, await this.writes.signalEvents(identity.customerId, events[1]!, await readJson(request)));
      const detail = /^\/api\/v1\/signals\/([1-9]\d{0,9})\/$/.exec(path);
      if (detail) {
        const id = Number(detail[1]);
        if (method === 'GET') return send(response, 200, await this.reads.getSignal(identity.customerId, detail[1]!));
        if (method === 'PATCH') return send(response, 200, await this.updateSignal(identity, id, await readJson(request)));
      }
      throw new BenchProblem(404, 'not_found', 'Not found.');
    } catch (error) {
      if (error instanceof BenchProblem) {
        return send(response, error.status, {
          type: 'about:blank',
          title: error.code,
          status: error.status,
          code: error.code,
          detail: error.message,
          ...(error.errors ? { errors: error.errors } : {}),
          request_id: requestId,
        });
      }
      process.stderr.write(`ceiling: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      send(response, 500, { status: 500, code: 'internal_error', detail: 'An internal error occurred.', request_id: requestId });
    }
  }

  private async authenticate(header: string | undefined): Promise<Identity> {
    const match = header && header.length <= 4096 ? AUTHORIZATION.exec(header) : null;
    if (!match) throw new BenchProblem(401, 'not_authenticated', 'Authentication credentials were not provided.');
    return match[1] === 'Bearer' ? this.authenticateJwt(match[2]!) : this.authenticateKey(match[2]!);
  }

  private async authenticateJwt(token: string): Promise<Identity> {
    let claims: jwt.JwtPayload;
    try {
      claims = jwt.verify(token, this.secret, { algorithms: ['HS256'], issuer: this.issuer }) as jwt.JwtPayload;
    } catch {
      throw new BenchProblem(401, 'token_not_valid', 'Token is invalid or expired.');
    }
    if (claims.type !== 'access' || typeof claims.sid !== 'string' || typeof claims.sub !== 'string')
      throw new BenchProblem(401, 'token_not_valid', 'Token is invalid or expired.');
    const session = await this.sessions.get(claims.sid);
    if (!sessionAdmits(session, claims.sub)) throw new BenchProblem(401, 'token_not_valid', 'Token is invalid or expired.');
    return { key: `user:${session.user_id}`, customerId: session.customer_id, canWrite: session.role !== 'viewer' };
  }

  private async authenticateKey(key: string): Promise<Identity> {
    const prefix = API_KEY.exec(key)?.[1];
    if (prefix === undefined) throw new BenchProblem(401, 'authentication_failed', 'Invalid API key.');
    const row = await this.keys.get(prefix);
    if (!keyAdmits(row, key)) throw new BenchProblem(401, 'authentication_failed', 'Invalid API key.');
    return { key: `api_key:${row.id}`, customerId: row.customer_id, canWrite: row.scope === 'write' };
  }

  /** The service's fixed-window limiter and its two headers, so both answer with the same bytes. */
  private countRequest(identity: Identity, response: ServerResponse): void {
    const { policy, remaining, throttled } = this.counter.count(identity.key);
    response.setHeader('ratelimit-policy', policy);
    response.setHeader('ratelimit', remaining);
    if (throttled) throw new BenchProblem(429, 'throttled', 'Request was throttled.');
  }

  /** PATCH of the description (what the benchmark sends), with the service's statements in its order. */
  private async updateSignal(identity: Identity, id: number, body: unknown) {
    const description = (body as { description?: unknown } | undefined)?.description;
    if (typeof description !== 'string' || description.length > 2000)
      throw new BenchProblem(400, 'validation_error', 'Some fields are invalid.', {
        description: ['Must be a string of at most 2000 characters.'],
      });
    return this.transaction(async (client) => {
      const row = (await client.query(named(SIGNAL_WRITE_STATEMENTS.forUpdate), [identity.customerId, id])).rows[0] as
        Record<string, unknown> | undefined;
      if (!row) throw new BenchProblem(404, 'not_found', 'Not found.');
      const delivery = async () =>
        (await client.query(named(SIGNAL_WRITE_STATEMENTS.delivery), [identity.customerId, id])).rows[0]!.delivery as unknown;
      if (row.description === description) return signalJson({ ...row, delivery: await delivery() });
      if (row.status === 4)
        throw new BenchProblem(400, 'validation_error', 'Some fields are invalid.', {
          status: ['This signal is archived and cannot be changed.'],
        });
      await this.checkReferences(client, identity.customerId, row.modelInstanceId, row.audienceId, row.connectionId);
      // The service's TenantRepository.save() writes with one UPDATE … RETURNING (no reload SELECT).
      const updated = (await client.query<{ updated_at: Date }>(SQL.signalUpdateDescription, [description, identity.customerId, id]))
        .rows[0]!;
      return signalJson({ ...row, description, updatedAt: updated.updated_at, delivery: await delivery() });
    });
  }

  private async createSignal(identity: Identity, body: unknown) {
    const input = (body ?? {}) as Record<string, unknown>;
    const errors: Record<string, string[]> = {};
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (name.length < 1 || name.length > 255) errors.name = ['This field is required (1 to 255 characters).'];
    if (typeof input.signal_type !== 'string' || !SIGNAL_TYPES.has(input.signal_type)) errors.signal_type = ['Invalid choice.'];
    const description = input.description ?? '';
    if (typeof description !== 'string' || description.length > 2000) errors.description = ['At most 2000 characters.'];
    const config = input.config ?? {};
    if (typeof config !== 'object' || config === null || Array.isArray(config)) errors.config = ['Must be an object.'];
    const reference = (value: unknown) => (value === undefined || value === null ? null : Number(value));
    const [modelId, audienceId, connectionId] = [reference(input.model_instance), reference(input.audience), reference(input.connection)];
    if (Object.keys(errors).length > 0) throw new BenchProblem(400, 'validation_error', 'Some fields are invalid.', errors);
    return this.transaction(async (client) => {
      await this.checkReferences(client, identity.customerId, modelId, audienceId, connectionId);
      const inserted = (
        await client.query(SQL.signalInsert, [
          identity.customerId,
          name,
          description,
          input.signal_type,
          0,
          modelId,
          audienceId,
          connectionId,
          JSON.stringify(config),
        ])
      ).rows[0] as { id: number; created_at: Date; updated_at: Date; description: string; status: number; config: unknown };
      // A new signal has no events, so no delivery row: the service answers zero counts without reading.
      return signalJson({
        id: inserted.id,
        customerId: identity.customerId,
        name,
        description: inserted.description,
        signalType: input.signal_type,
        status: inserted.status,
        modelInstanceId: modelId,
        audienceId,
        connectionId,
        config: inserted.config,
        statusReason: null,
        delivery: null,
        createdAt: inserted.created_at,
        updatedAt: inserted.updated_at,
      });
    });
  }

  /** The service re-checks every non-null reference of the new state, with these three queries. */
  private async checkReferences(client: pg.PoolClient, customerId: number, modelId: unknown, audienceId: unknown, connectionId: unknown) {
    const errors: Record<string, string[]> = {};
    if (modelId !== null && (await client.query(SQL.modelExists, [customerId, modelId])).rowCount === 0)
      errors.model_instance = ['Does not exist.'];
    if (audienceId !== null && (await client.query(SQL.audienceExists, [customerId, audienceId])).rowCount === 0)
      errors.audience = ['Does not exist.'];
    if (connectionId !== null && (await client.query(SQL.connectionById, [customerId, connectionId])).rowCount === 0)
      errors.connection = ['Does not exist.'];
    if (Object.keys(errors).length > 0) throw new BenchProblem(400, 'validation_error', 'Some fields are invalid.', errors);
  }

  private async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('START TRANSACTION');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) });
  response.end(json);
}

function readJson(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 1024 * 1024) reject(new BenchProblem(413, 'payload_too_large', 'The request body is larger than 1 MiB.'));
      else chunks.push(chunk);
    });
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') return resolve(undefined);
      try {
        resolve(secureJsonParse.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
      } catch {
        reject(new BenchProblem(400, 'parse_error', 'Malformed JSON in the request body.'));
      }
    });
    request.on('error', reject);
  });
}

function main(): void {
  const env = process.env;
  // Ids are bigint; the service reads int8 as a JavaScript number (TypeORM's parseInt8), and so
  // must the ceiling, or its JSON would carry ids as strings.
  pg.types.setTypeParser(pg.types.builtins.INT8, Number);
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: POOL_SIZE, application_name: 'bench-ceiling' });
  const secret = createSecretKey(Buffer.from(env.JWT_SECRET ?? '', 'utf8'));
  const ceiling = new Ceiling(pool, secret, env.JWT_ISSUER ?? 'audience-signal-platform', Number(env.RATE_LIMIT_PER_MINUTE ?? 1_000_000));
  const server = createServer((request, response) => void ceiling.handle(request, response));
  // Same keep-alive behaviour as Fastify's defaults, so autocannon's connections are reused alike.
  server.keepAliveTimeout = 72_000;
  server.listen(Number(env.CEILING_PORT ?? 0), env.CEILING_HOST ?? '127.0.0.1', () => {
    process.stdout.write(`ceiling listening on ${JSON.stringify(server.address())}\n`);
  });
  const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main();
