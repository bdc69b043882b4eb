import 'reflect-metadata';
import { createSecretKey, type KeyObject, randomUUID } from 'node:crypto';
import {
  type CanActivate,
  Controller,
  type DynamicModule,
  type ExecutionContext,
  Body,
  Get,
  HttpCode,
  HttpException,
  Injectable,
  Module,
  Param,
  Post,
  Req,
  SetMetadata,
} from '@nestjs/common';
import { APP_GUARD, NestFactory, Reflector } from '@nestjs/core';
import { AuthGuard, PassportStrategy } from '@nestjs/passport';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JwtPayload } from 'jsonwebtoken';
import { HeaderAPIKeyStrategy } from 'passport-headerapikey';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { DataSource } from 'typeorm';
import { prepared, PreparingClient } from '../src/database/prepared-statements.js';
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
import { BenchProblem, READ_STATEMENTS, ReadAnswers } from './read-answers.js';
import { WRITE_STATEMENTS, WriteAnswers } from './write-answers.js';

/**
 * THE FLOOR: the least the design's required stack (Nest on Fastify, @nestjs/passport with
 * passport-jwt and passport-headerapikey, TypeORM) can do to answer the read scenarios (the
 * audience and signal lists, page 1 and deep, and the signal detail) and the data plane's writes
 * (the people batch, a signal's events), so that floor/ceiling says
 * how much of the service/ceiling gap the stack itself costs and service/floor how much is the
 * service's own doing.
 *
 * It does the ceiling's work for those requests through the stack's own parts: one global guard
 * picks AuthGuard('jwt') or AuthGuard('api-key') from the Authorization scheme; each strategy's
 * validate() makes the ceiling's identity checks with the same Map caches (passport-jwt gets the
 * prebuilt KeyObject, as the service's strategy does); the guard then counts the ceiling's
 * per-identity fixed window and sets its headers; the controllers answer through
 * bench/read-answers.ts and bench/write-answers.ts, the ceiling's own statements and JSON, run by
 * DataSource.query() and DataSource.transaction() (the cheapest ways TypeORM offers and the ones
 * the service uses) and named through the service's own
 * pool client (src/database/prepared-statements.ts), so PostgreSQL does the same work for all
 * three. Refusals are HttpExceptions carrying the ceiling's problem body, written by Nest's
 * default handler.
 * What it leaves out is what the service adds on top of the stack: logging, metrics, CLS, pipes,
 * validation, interceptors, filters, security headers, the credential cache's invalidation,
 * access policies, the other routes.
 *
 * Run as its own process, pinned like the ceiling: `node dist/bench/floor.js` with FLOOR_PORT,
 * DATABASE_URL, JWT_SECRET and JWT_ISSUER.
 */

const PUBLIC = 'floor:public';

class FloorSettings {
  constructor(
    readonly databaseUrl: string | undefined,
    readonly secret: KeyObject,
    readonly issuer: string,
    readonly rateLimit: number,
  ) {}
}

interface Identity {
  key: string;
  customerId: number;
}

type IdentifiedRequest = FastifyRequest & { user?: Identity };

// Named prepared statements through the service's pool client, as the service's and the ceiling's are.
for (const sql of [...Object.values(READ_STATEMENTS), ...WRITE_STATEMENTS]) prepared(sql);

/** The ceiling's error body; Nest's default exception handler sends an HttpException's object as it is. */
function problem(refusal: BenchProblem, requestId: string): HttpException {
  const { status, code, message: detail, errors } = refusal;
  return new HttpException(
    { type: 'about:blank', title: code, status, code, detail, ...(errors ? { errors } : {}), request_id: requestId },
    status,
  );
}

@Injectable()
class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  private readonly sessions: CachedRows<SessionRow>;

  constructor(settings: FloorSettings, dataSource: DataSource) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      secretOrKey: settings.secret as unknown as string,
      algorithms: ['HS256'],
      issuer: settings.issuer,
    });
    this.sessions = new CachedRows(async (sid) => ((await dataSource.query(SESSION_SQL, [sid])) as SessionRow[])[0] ?? null);
  }

  async validate(claims: JwtPayload): Promise<Identity | null> {
    if (claims.type !== 'access' || typeof claims.sid !== 'string' || typeof claims.sub !== 'string') return null;
    const session = await this.sessions.get(claims.sid);
    if (!sessionAdmits(session, claims.sub)) return null;
    return { key: `user:${session.user_id}`, customerId: session.customer_id };
  }
}

@Injectable()
class ApiKeyStrategy extends PassportStrategy(HeaderAPIKeyStrategy, 'api-key') {
  private readonly keys: CachedRows<KeyRow>;

  constructor(dataSource: DataSource) {
    super({ header: 'Authorization', prefix: 'Api-Key ' }, false);
    this.keys = new CachedRows(async (prefix) => ((await dataSource.query(API_KEY_SQL, [prefix])) as KeyRow[])[0] ?? null);
  }

  async validate(key: string): Promise<Identity | null> {
    const prefix = API_KEY.exec(key)?.[1];
    if (prefix === undefined) return null;
    const row = await this.keys.get(prefix);
    if (!keyAdmits(row, key)) return null;
    return { key: `api_key:${row.id}`, customerId: row.customer_id };
  }
}

/** The strategy's guard, its refusal turned into the ceiling's 401 for that credential. */
function strategyGuard(strategy: 'jwt' | 'api-key', code: string, detail: string): CanActivate {
  class StrategyGuard extends AuthGuard(strategy) {
    override handleRequest<T>(error: unknown, identity: T, _info: unknown, context: ExecutionContext): T {
      if (error) throw error;
      if (!identity) throw problem(new BenchProblem(401, code, detail), context.switchToHttp().getRequest<FastifyRequest>().id);
      return identity;
    }
  }
  return new StrategyGuard({ session: false });
}

const Public = () => SetMetadata(PUBLIC, true);

/** The one global guard: request id, then (but on public routes) credential and request count. */
@Injectable()
class CredentialGuard implements CanActivate {
  private readonly jwt = strategyGuard('jwt', 'token_not_valid', 'Token is invalid or expired.');
  private readonly apiKey = strategyGuard('api-key', 'authentication_failed', 'Invalid API key.');

  private readonly counter: RequestCounter;

  constructor(
    private readonly reflector: Reflector,
    settings: FloorSettings,
  ) {
    this.counter = new RequestCounter(settings.rateLimit);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<IdentifiedRequest>();
    const reply = http.getResponse<FastifyReply>();
    reply.header('x-request-id', request.id);
    if (this.reflector.get<boolean | undefined>(PUBLIC, context.getHandler())) return true;
    const header = request.headers.authorization;
    const match = header && header.length <= 4096 ? AUTHORIZATION.exec(header) : null;
    if (!match) throw problem(new BenchProblem(401, 'not_authenticated', 'Authentication credentials were not provided.'), request.id);
    await (match[1] === 'Bearer' ? this.jwt : this.apiKey).canActivate(context);
    const { policy, remaining, throttled } = this.counter.count(request.user!.key);
    reply.header('ratelimit-policy', policy);
    reply.header('ratelimit', remaining);
    if (throttled) throw problem(new BenchProblem(429, 'throttled', 'Request was throttled.'), request.id);
    return true;
  }
}

/** A scenario's answer on this request's workspace; a BenchProblem becomes the ceiling's problem body. */
async function answer<T>(request: IdentifiedRequest, read: (customerId: number, url: URL) => Promise<T>): Promise<T> {
  try {
    return await read(request.user!.customerId, new URL(request.url, `http://${request.headers.host ?? 'localhost'}`));
  } catch (error) {
    throw error instanceof BenchProblem ? problem(error, request.id) : error;
  }
}

@Controller()
class ReadController {
  private readonly reads: ReadAnswers;

  constructor(private readonly dataSource: DataSource) {
    this.reads = new ReadAnswers((sql, parameters) => dataSource.query(sql, parameters));
  }

  @Public()
  @Get('readyz')
  async readyz() {
    await this.dataSource.query('SELECT 1');
    return { status: 'ok', checks: { database: 'ok' } };
  }

  @Get('api/v1/audiences')
  audiences(@Req() request: IdentifiedRequest) {
    return answer(request, (customerId, url) => this.reads.listAudiences(customerId, url));
  }

  @Get('api/v1/signals')
  signals(@Req() request: IdentifiedRequest) {
    return answer(request, (customerId, url) => this.reads.listSignals(customerId, url));
  }

  @Get('api/v1/signals/:id')
  signal(@Param('id') id: string, @Req() request: IdentifiedRequest) {
    return answer(request, (customerId) => this.reads.getSignal(customerId, id));
  }
}

@Controller()
class WriteController {
  private readonly writes: WriteAnswers;

  constructor(dataSource: DataSource) {
    this.writes = new WriteAnswers(
      (sql, parameters) => dataSource.query(sql, parameters),
      (work) => dataSource.transaction((manager) => work((sql, parameters) => manager.query(sql, parameters))),
    );
  }

  @Post('api/v1/people/batch')
  @HttpCode(200)
  peopleBatch(@Body() body: unknown, @Req() request: IdentifiedRequest) {
    return answer(request, (customerId) => this.writes.peopleBatch(customerId, body));
  }

  @Post('api/v1/signals/:id/events')
  @HttpCode(202)
  signalEvents(@Param('id') id: string, @Body() body: unknown, @Req() request: IdentifiedRequest) {
    return answer(request, (customerId) => this.writes.signalEvents(customerId, id, body));
  }
}

@Module({})
class FloorModule {
  static forRoot(settings: FloorSettings): DynamicModule {
    return {
      module: FloorModule,
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: settings.databaseUrl,
          poolSize: POOL_SIZE,
          // As the service: int8 ids read as numbers.
          parseInt8: true,
          synchronize: false,
          applicationName: 'bench-floor',
          // The service's pool client: statements marked by prepared() go named, as the service's and the ceiling's do.
          extra: { Client: PreparingClient },
        }),
      ],
      controllers: [ReadController, WriteController],
      providers: [
        { provide: FloorSettings, useValue: settings },
        JwtStrategy,
        ApiKeyStrategy,
        { provide: APP_GUARD, useClass: CredentialGuard },
      ],
    };
  }
}

async function main(): Promise<void> {
  const env = process.env;
  const settings = new FloorSettings(
    env.DATABASE_URL,
    createSecretKey(Buffer.from(env.JWT_SECRET ?? '', 'utf8')),
    env.JWT_ISSUER ?? 'audience-signal-platform',
    Number(env.RATE_LIMIT_PER_MINUTE ?? 1_000_000),
  );
  const adapter = new FastifyAdapter({ logger: false, genReqId: () => randomUUID(), routerOptions: { ignoreTrailingSlash: true } });
  const app = await NestFactory.create<NestFastifyApplication>(FloorModule.forRoot(settings), adapter, { logger: false });
  await app.listen(Number(env.FLOOR_PORT ?? 0), env.FLOOR_HOST ?? '127.0.0.1');
  process.stdout.write(`floor listening on ${JSON.stringify(app.getHttpServer().address())}\n`);
  const stop = () => void app.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`floor: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
