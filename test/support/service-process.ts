import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './test-app.js';

const ROOT = new URL('../../', import.meta.url);

/** The service as `npm start` runs it (src/main.ts), in a process of its own, with what it wrote. */
export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  /** Everything written to stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** SIGKILL if still running: for afterAll, after a failure. */
  kill(): Promise<void>;
}

/**
 * Starts src/main.ts with ts-loader.mjs (the TypeScript sources, no build) on a free port, with
 * `env` over a development-like environment of its own data directory, and resolves once it says
 * it listens (the banner in development, the `listening` log line elsewhere).
 */
export async function startService(env: Record<string, string>, timeoutMs = 60_000): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', './test/support/ts-loader.mjs', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      NODE_OPTIONS: '',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'service-')),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const service: ServiceProcess = {
    child,
    baseUrl: `http://127.0.0.1:${port}`,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  const deadline = Date.now() + timeoutMs;
  while (!/listening on http|"msg":"listening"/.test(stdout)) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode} before listening:\n${stdout}\n${stderr}`);
    if (Date.now() > deadline) {
      await service.kill();
      throw new Error(`the service did not listen within ${timeoutMs} ms:\n${stdout}\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return service;
}
