import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, rmSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { csvRecordToPerson, isRejected, readCsvHeader, readImportRow } from '../src/imports/import-row-reader.js';
import { STAGED_COLUMNS, stagedRowCopyLine } from '../src/imports/imports.repository.js';
import { readRssKb } from './load.js';
import { cli, freshDatabase, log, waitForHealth } from './scenario-service.js';
import { DEPLOYED_NODE_ARGS } from './settings.js';

/**
 * `npm run build && node dist/bench/imports.js [--rows N] [--node-args='…']` with DATABASE_URL set to a PostgreSQL
 * server (a database `audience_bench_imports` is created afresh there): imports a generated CSV
 * of N rows (default 1,000,000: email, phone, first and last name, country, postal code, 3 traits)
 * through `npm start`'s process end to end (HTTP upload, hashing, COPY, merge job) and reports
 * rows/s, beside a plain COPY of the same rows pre-hashed into the same staging table (the
 * limit), and the service's RSS before and at its peak during the import. Not a test: the figures
 * depend on the machine and its neighbours.
 */

const DATABASE_NAME = 'audience_bench_imports';
const HEADER = 'external_id,email,phone,first_name,last_name,country_code,postal_code,ltv:number,vip:boolean,plan\n';

function row(i: number): string {
  return `bench-${i},Person.${i}@Example.com,+1415${String(i % 10_000_000).padStart(7, '0')},First${i},Last${i},US,${String(10_000 + (i % 90_000))},${i / 100},${i % 2 === 0},plan-${i % 5}\n`;
}

function* chunks(rows: number): Generator<string> {
  yield HEADER;
  for (let start = 1; start <= rows; start += 2000) {
    let text = '';
    for (let i = start; i < start + 2000 && i <= rows; i++) text += row(i);
    yield text;
  }
}

/** Uploads the generated file with backpressure (write, then wait for drain); answers the 202 body. */
function upload(port: number, key: string, rows: number): Promise<{ id: number; status: string }> {
  return new Promise((resolve, reject) => {
    const client = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/v1/imports/?target=people',
        headers: { authorization: `Api-Key ${key}`, 'content-type': 'text/csv' },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () =>
          response.statusCode === 202
            ? resolve(JSON.parse(text) as { id: number; status: string })
            : reject(new Error(`${response.statusCode} ${text}`)),
        );
      },
    );
    client.on('error', reject);
    const source = chunks(rows);
    const write = () => {
      for (let next = source.next(); !next.done; next = source.next())
        if (!client.write(next.value)) return void client.once('drain', write);
      client.end();
    };
    write();
  });
}

async function plainCopy(url: string, rows: number): Promise<number> {
  // Pre-hashed outside the timing: the limit is PostgreSQL taking the staged rows.
  const file = join(tmpdir(), `bench-imports-${process.pid}.copy`);
  const out = createWriteStream(file);
  const layout = readCsvHeader(HEADER.trim().split(','));
  let line = 1;
  for (const text of chunks(rows)) {
    if (text === HEADER) continue;
    let buffer = '';
    for (const csv of text.split('\n')) {
      if (csv === '') continue;
      line++;
      const staged = readImportRow(line, csvRecordToPerson(layout, csv.split(',')).person);
      if (!isRejected(staged)) buffer += stagedRowCopyLine(1, 1, staged);
    }
    if (!out.write(buffer)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('CREATE UNLOGGED TABLE IF NOT EXISTS bench_copy (LIKE import_rows INCLUDING ALL)');
  await client.query('ALTER TABLE bench_copy SET LOGGED');
  await client.query('TRUNCATE bench_copy');
  const started = performance.now();
  await pipeline(createReadStream(file), client.query(copyFrom(`COPY bench_copy (${STAGED_COLUMNS}) FROM STDIN`)));
  const seconds = (performance.now() - started) / 1000;
  await client.query('DROP TABLE bench_copy');
  await client.end();
  rmSync(file);
  return seconds;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '1000000' },
      port: { type: 'string', default: '3917' },
      // Extra node flags for the service, after the deployed ones (e.g. --cpu-prof to see where staging goes).
      'node-args': { type: 'string', default: '' },
    },
  });
  const rows = Number(values.rows);
  const port = Number(values.port);
  const serverUrl = process.env.DATABASE_URL?.trim();
  if (!serverUrl) throw new Error('set DATABASE_URL to a PostgreSQL server; a database audience_bench_imports is created there');
  const url = await freshDatabase(serverUrl, DATABASE_NAME);
  const env = {
    ...process.env,
    DATABASE_URL: url,
    PORT: String(port),
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DEMO_WORKSPACE: 'false',
    WORKER_CONCURRENCY: '1',
    // A 1M-row upload takes longer than the default whole-request deadline (README, "Imports").
    REQUEST_TIMEOUT_MS: '3600000',
    RATE_LIMIT_PER_MINUTE: '100000',
  };
  const customer = cli(env, 'customer', 'create', '--name', 'bench imports');
  const key = cli(env, 'apikey', 'create', '--customer', String(customer.id), '--name', 'bench', '--scope', 'write').key as string;
  const nodeArgs = values['node-args'].split(' ').filter((arg) => arg !== '');
  const server = spawn(process.execPath, [...DEPLOYED_NODE_ARGS, ...nodeArgs, 'dist/src/main.js'], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  try {
    await waitForHealth(port);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const rssBefore = readRssKb(server.pid!) ?? 0;
    let peak = rssBefore;
    const sampler = setInterval(() => {
      const rss = readRssKb(server.pid!);
      if (rss !== undefined && rss > peak) peak = rss;
    }, 100);
    log(`importing ${rows} rows…`);
    const started = performance.now();
    const queued = await upload(port, key, rows);
    const staged = (performance.now() - started) / 1000;
    let status = queued.status;
    let body: Record<string, unknown> = {};
    while (status !== 'succeeded' && status !== 'failed') {
      await new Promise((resolve) => setTimeout(resolve, 250));
      body = (await (
        await fetch(`http://127.0.0.1:${port}/api/v1/imports/${queued.id}/`, { headers: { authorization: `Api-Key ${key}` } })
      ).json()) as Record<string, unknown>;
      status = body.status as string;
    }
    const total = (performance.now() - started) / 1000;
    clearInterval(sampler);
    if (status !== 'succeeded') throw new Error(`import ${status}: ${JSON.stringify(body.errors_sample)}`);
    log('plain COPY of the same rows, pre-hashed…');
    const copySeconds = await plainCopy(url, rows);
    const result = {
      rows,
      upload_and_staging_seconds: Number(staged.toFixed(1)),
      end_to_end_seconds: Number(total.toFixed(1)),
      end_to_end_rows_per_second: Math.round(rows / total),
      staging_rows_per_second: Math.round(rows / staged),
      plain_copy_seconds: Number(copySeconds.toFixed(1)),
      plain_copy_rows_per_second: Math.round(rows / copySeconds),
      end_to_end_share_of_copy: Number((copySeconds / total).toFixed(2)),
      rss_before_mb: Math.round(rssBefore / 1024),
      rss_peak_mb: Math.round(peak / 1024),
      rss_growth_mb: Math.round((peak - rssBefore) / 1024),
      service_node_args: [...DEPLOYED_NODE_ARGS, ...nodeArgs].join(' '),
      load_average: loadavg()
        .map((load) => load.toFixed(2))
        .join(' '),
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
  }
}

await main();
