import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { openDatabase } from '../src/database/database.js';

/**
 * What the data plane's scenarios (bench/imports.ts, bench/memberships.ts) share: a fresh database
 * of their own, the admin CLI to make a workspace and a key, and a wait for the service they start.
 */

export function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Drops and creates `name` on the server `serverUrl` names, migrates it, and answers its URL. `name` is a plain identifier. */
export async function freshDatabase(serverUrl: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase(
    { databaseUrl: url.toString(), dataDir: '.data', databasePoolSize: 2 },
    { applicationName: 'bench-migrate' },
  );
  await database.dataSource.destroy();
  return url.toString();
}

/** One command of the built admin CLI, answering its JSON. */
export function cli(env: NodeJS.ProcessEnv, ...args: string[]): Record<string, unknown> {
  return JSON.parse(execFileSync(process.execPath, ['dist/src/cli/audience-admin.js', ...args], { env }).toString()) as Record<
    string,
    unknown
  >;
}

export async function waitForHealth(port: number): Promise<void> {
  for (let tries = 0; tries < 300; tries++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the service did not start');
}
