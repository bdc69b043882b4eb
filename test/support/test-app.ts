import { createServer } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { pino, type Logger } from 'pino';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { closeGracefully, createApp } from '../../src/app.js';
import { discardBody } from '../../src/common/http/discard-body.js';
import { SettableClock } from '../../src/common/time/clock.js';
import { loadConfig, type AppConfig } from '../../src/config/app-config.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

export const TEST_ENV = {
  NODE_ENV: 'test',
  JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789',
  ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
  LOG_LEVEL: 'silent',
  DEMO_WORKSPACE: 'false',
  // Suites send hundreds of deliberately bad credentials from one address; test/throttling sets its own.
  AUTHENTICATION_FAILURES_PER_IP_PER_MINUTE: '1000000',
  // API-only unless a suite is about jobs: no worker connections or schedules in the others.
  WORKER_CONCURRENCY: '0',
};

export interface TestApp {
  app: NestFastifyApplication;
  baseUrl: string;
  config: AppConfig;
  /** The app's own DataSource (its pool), for fixtures and checks that read the database directly. */
  dataSource: DataSource;
  /** The database the app runs on: its own, or the `DATABASE_URL` it was given. */
  databaseUrl: string;
  /** The app's clock: move it to expire tokens and keys without sleeping. */
  clock: SettableClock;
  /** fetch() against the app, with a path relative to its base URL. */
  request(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The real application on a real port with a database of its own, dropped on close; or on the
 * `DATABASE_URL` given in `env` (through a proxy, or shared with another instance), which the
 * caller owns. `dataSourceOverrides` reach the app's DataSource options (a query logger); `port`
 * is for a test that must know the app's address before it starts (a provider's redirect URI);
 * `logger` replaces the silent one, for a test that reads the log.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: { dataSourceOverrides?: Partial<DataSourceOptions>; port?: number; logger?: Logger } = {},
): Promise<TestApp> {
  const owned: TestDatabase | undefined = env.DATABASE_URL ? undefined : await createTestDatabase();
  const config = loadConfig({ ...TEST_ENV, ...(owned ? { DATABASE_URL: owned.url } : {}), ...env });
  const clock = new SettableClock();
  // REDIS_URL in `env` runs the app on Redis (rate-limit counters, /readyz), as in production; the app connects and disconnects it.
  const app = await createApp({
    config,
    logger: options.logger ?? pino({ level: 'silent' }),
    clock,
    dataSourceOverrides: options.dataSourceOverrides,
  });
  const dataSource = app.get(DataSource);
  await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address() as { port: number };
  const baseUrl = `http://127.0.0.1:${address.port}`;
  // Answers whose body a test may never read: fetch keeps such a connection open, and one whose
  // body is larger than its buffer paused, so it would not even see the server close it and would
  // keep the test's worker alive after the run. close() drops what is left unread first.
  const answers = new Set<Response>();
  return {
    app,
    baseUrl,
    config,
    dataSource,
    databaseUrl: config.databaseUrl!,
    clock,
    async request(path, init) {
      const response = await fetch(`${baseUrl}${path}`, init);
      if (answers.size >= 1000) for (const read of answers) if (read.bodyUsed) answers.delete(read);
      answers.add(response);
      return response;
    },
    async close() {
      for (const response of answers) await discardBody(response);
      answers.clear();
      await closeGracefully(app, 10_000);
      await owned?.drop();
    },
  };
}

/** A port nobody listens on right now, for an app whose address must be known before it starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
