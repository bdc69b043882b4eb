import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fetchJson } from './load.js';
import { note } from './progress.js';
import { BENCH_PASSWORD } from './settings.js';

/** A server under test, running as its own process (so it has its own event loop, like in production). */
export interface RunningServer {
  name: 'service' | 'ceiling' | 'floor';
  pid: number;
  baseUrl: string;
  logFile: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  name: 'service' | 'ceiling' | 'floor';
  script: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  logDir: string;
  /** `taskset -c <cpu>`: the core this server may run on, or undefined to leave it to the scheduler. */
  cpu: number | undefined;
  port: number;
  nodeArgs?: string[];
  /** The node binary to run the server with; the bench's own by default. */
  node?: string;
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  mkdirSync(options.logDir, { recursive: true });
  const logFile = join(options.logDir, `${options.name}.log`);
  const log = createWriteStream(logFile, { flags: 'w' });
  // taskset execs node in place, so the pid we get is the server's own (for RSS and CPU sampling).
  const node = [options.node ?? process.execPath, ...(options.nodeArgs ?? []), options.script];
  const [command, args] = options.cpu === undefined ? [node[0]!, node.slice(1)] : ['taskset', ['-c', String(options.cpu), ...node]];
  const child: ChildProcess = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  let exited: number | null | undefined;
  child.once('exit', (code) => {
    exited = code;
  });
  const baseUrl = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + 90_000;
  while (true) {
    if (exited !== undefined) throw new Error(`${options.name} exited with code ${exited} before it was ready; see ${logFile}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.name} was not ready within 90 s; see ${logFile}`);
    }
    try {
      const response = await fetch(`${baseUrl}/readyz`);
      if (response.status === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  note(`${options.name} ready on ${baseUrl} (pid ${child.pid}${options.cpu === undefined ? '' : `, pinned to CPU ${options.cpu}`})`);
  return {
    name: options.name,
    pid: child.pid!,
    baseUrl,
    logFile,
    async stop() {
      if (exited !== undefined) return;
      const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await done;
      clearTimeout(timer);
    },
  };
}

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

/** Whether `taskset` is there to pin processes to cores. */
export function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** An access token for a seeded admin, through the real login endpoint. */
export async function login(baseUrl: string, email: string): Promise<string> {
  const { status, body } = await fetchJson(`${baseUrl}/api/v1/jwt/create/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: BENCH_PASSWORD }),
  });
  if (status !== 200) throw new Error(`login of ${email} failed: ${status} ${JSON.stringify(body)}`);
  return (body as { access: string }).access;
}
