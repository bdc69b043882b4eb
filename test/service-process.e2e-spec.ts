import { BusyConnection } from './support/busy-connection.js';
import { startService, type ServiceProcess } from './support/service-process.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

// Each test starts the service from its TypeScript sources, which takes 10-30 s on a busy machine.
const START_AND_RUN_MS = 120_000;

/**
 * The service as `npm start` runs it, in a process of its own (src/main.ts, from the sources).
 * Issue 25, item 19: on the first start of an empty database the terminal shows the start-up log,
 * then the banner with the demo login, and nothing after it until something happens, so the login
 * is not buried among JSON lines. Item 7: SIGTERM under keep-alive load resets no connection.
 */
describe('npm start in development, on an empty database', () => {
  let database: TestDatabase;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await service?.kill();
    await database.drop();
  });

  it(
    'prints the banner with the demo login after every start-up log line',
    async () => {
      service = await startService({ NODE_ENV: 'development', DATABASE_URL: database.url, LOG_LEVEL: 'info' });
      // Past the log's own batching (a write at least every 250 ms) and the demo data's requests.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const output = service.stdout();
      const lines = output.split('\n').filter((line) => line.trim() !== '');
      const banner = lines.findIndex((line) => line.startsWith('Audience and Signal Platform API listening on'));
      expect(banner).toBeGreaterThan(0);
      expect(lines.slice(banner).join('\n')).toMatch(
        /Demo workspace \d+: log in at http:\/\/localhost:\d+\/app\/ as admin@demo\.example \/ \S+/,
      );
      // Before it: the start-up log, the demo data's requests among it.
      expect(lines.slice(0, banner).every((line) => line.startsWith('{'))).toBe(true);
      expect(lines.slice(0, banner).some((line) => (JSON.parse(line) as { msg: string }).msg === 'request')).toBe(true);
      // After it: only the banner's own lines, no JSON.
      expect(lines.slice(banner).filter((line) => line.startsWith('{'))).toEqual([]);

      service.child.kill('SIGTERM');
      expect(await service.exited).toBe(0);
    },
    START_AND_RUN_MS,
  );
});

describe('SIGTERM while keep-alive clients keep the service busy', () => {
  let database: TestDatabase;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await service?.kill();
    await database.drop();
  });

  it(
    'resets no connection, answers every request sent, and ends each connection after an answer with Connection: close',
    async () => {
      service = await startService({
        NODE_ENV: 'production',
        DATABASE_URL: database.url,
        ALLOWED_HOSTS: '127.0.0.1',
        JWT_SECRET: 'x'.repeat(40),
        ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64'),
        LOG_LEVEL: 'info',
        WORKER_CONCURRENCY: '0',
      });
      const url = new URL(service.baseUrl);
      let signalled = false;
      const connections = Array.from({ length: 6 }, () => new BusyConnection(url.hostname, Number(url.port), '/readyz', () => signalled));
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(connections.every((connection) => connection.answers.length > 0)).toBe(true);

      signalled = true;
      service.child.kill('SIGTERM');
      expect(await service.exited).toBe(0);
      await Promise.all(connections.map((connection) => connection.closed));

      for (const [index, connection] of connections.entries()) {
        expect({
          index,
          error: connection.error?.message,
          unanswered: connection.unanswered,
          lastAnswer: connection.answers.at(-1)?.connection,
          statuses: [...new Set(connection.answers.map((answer) => answer.status))],
        }).toEqual({ index, error: undefined, unanswered: 0, lastAnswer: 'close', statuses: [200] });
      }
    },
    START_AND_RUN_MS,
  );
});
