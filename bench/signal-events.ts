import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { TokenCipher } from '../src/connections/token-cipher.js';
import { startFakeGoogleAds, startFakeMetaAds } from '../test/support/fake-ad-platforms.js';
import { sampleEvent } from './scenarios.js';
import { cli, freshDatabase, log, waitForHealth } from './scenario-service.js';
import { DEPLOYED_NODE_ARGS } from './settings.js';

/**
 * Signal events (SPEC 10.4), through the built service on a database of its own: how many events a
 * second `POST /api/v1/signals/{id}/events/` accepts in batches of 1,000 (each event with an email
 * and a phone to normalise and hash, a value and a click or browser id), and how many a second the
 * delivery jobs then send to the local Google (events:ingest) and Meta (Conversions API) servers,
 * which check every request as the platforms do. Acceptance is measured on a paused signal (the
 * events are held, so no delivery competes for the two cores), delivery from the moment it is
 * activated until the last event is delivered.
 *
 * `node dist/bench/signal-events.js [--events 100000] [--concurrency 4]` with DATABASE_URL naming
 * a PostgreSQL server (a database audience_bench_signal_events is created there).
 */

const DATABASE_NAME = 'audience_bench_signal_events';
const BATCH = 1_000;

interface Phase {
  events: number;
  seconds: number;
  perSecond: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      events: { type: 'string', default: '100000' },
      concurrency: { type: 'string', default: '4' },
      port: { type: 'string', default: '3112' },
    },
  });
  const total = Math.ceil(Number(values.events) / BATCH) * BATCH;
  const concurrency = Number(values.concurrency);
  const port = Number(values.port);
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error(`set DATABASE_URL to a PostgreSQL server; a database ${DATABASE_NAME} is created there`);
  const url = await freshDatabase(serverUrl, DATABASE_NAME);
  const google = await startFakeGoogleAds();
  const meta = await startFakeMetaAds();
  const encryptionKey = randomBytes(32);
  const env = {
    ...process.env,
    DATABASE_URL: url,
    PORT: String(port),
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DEMO_WORKSPACE: 'false',
    ENCRYPTION_KEY: encryptionKey.toString('base64'),
    WORKER_CONCURRENCY: '2',
    JOB_POLL_INTERVAL_MS: '100',
    RATE_LIMIT_PER_MINUTE: '1000000',
    GOOGLE_DATA_MANAGER_URL: google.url,
    META_GRAPH_URL: `${meta.url}/v25.0`,
    META_APP_ID: meta.appId,
    META_APP_SECRET: meta.appSecret,
  };
  const customerId = Number(cli(env, 'customer', 'create', '--name', 'bench signal events').id);
  const key = cli(env, 'apikey', 'create', '--customer', String(customerId), '--name', 'bench', '--scope', 'write').key as string;
  // Connections as the OAuth flow leaves them: active, with a live token of each fake platform.
  const cipher = TokenCipher.fromConfig({ encryptionKey, encryptionPreviousKeys: [] });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const connection = async (platform: 'google_ads' | 'meta_ads', account: string, token: string) =>
    Number(
      (
        await client.query<{ id: string }>(
          `INSERT INTO connections (customer_id, platform, external_account_id, account_name, status, access_token_encrypted)
           VALUES ($1, $2, $3, $3, 'active', $4) RETURNING id`,
          [customerId, platform, account, cipher.encrypt(token)],
        )
      ).rows[0]!.id,
    );
  google.accounts = [{ id: '1234567890', name: 'Bench' }];
  google.events.conversionActions.set('777000111', '1234567890');
  meta.conversions.pixels.add('888000222');
  const googleConnection = await connection('google_ads', '1234567890', google.issueAccessToken());
  const metaConnection = await connection('meta_ads', '2345678901', meta.issueAccessToken());
  await client.end();

  const server = spawn(process.execPath, [...DEPLOYED_NODE_ARGS, 'dist/src/main.js'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const headers = { authorization: `Api-Key ${key}`, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const results: Record<string, unknown> = { events: total, batch: BATCH, concurrency };
  try {
    await waitForHealth(port);
    for (const platform of ['google_ads', 'meta_ads'] as const) {
      const signal = await call('POST', '/api/v1/signals/', {
        name: `bench ${platform}`,
        signal_type: 'value',
        connection: platform === 'google_ads' ? googleConnection : metaConnection,
        config:
          platform === 'google_ads'
            ? { conversion_action_id: '777000111' }
            : { pixel_id: '888000222', event_name: 'Purchase', action_source: 'system_generated' },
        status: 1,
      });
      const id = signal.id as number;
      await call('PATCH', `/api/v1/signals/${id}/`, { status: 2 });
      const accepted = await accept(call, id, platform, total, concurrency);
      log(`${platform}: accepted ${JSON.stringify(accepted)}`);
      const delivered = await deliver(call, id, total);
      log(`${platform}: delivered ${JSON.stringify(delivered)}`);
      results[platform] = {
        accepted,
        delivered,
        platformRequests: platform === 'google_ads' ? google.events.requests.length : meta.conversions.requests.length,
      };
    }
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    await google.close();
    await meta.close();
  }
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
}

type Call = (method: string, path: string, body?: unknown) => Promise<Record<string, unknown>>;

/** Posts `total` events in batches of 1,000, `concurrency` requests at a time; answers accepted events per second. */
async function accept(
  call: Call,
  signalId: number,
  platform: 'google_ads' | 'meta_ads',
  total: number,
  concurrency: number,
): Promise<Phase> {
  const batches = total / BATCH;
  let next = 0;
  let accepted = 0;
  const now = Date.now();
  const started = performance.now();
  const worker = async () => {
    for (let batch = next++; batch < batches; batch = next++) {
      const events = Array.from({ length: BATCH }, (_, index) => {
        const n = batch * BATCH + index;
        return sampleEvent(`${platform}-${n}`, n, now, platform);
      });
      const answer = await call('POST', `/api/v1/signals/${signalId}/events/`, { events });
      accepted += answer.accepted as number;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  if (accepted !== total) throw new Error(`accepted ${accepted} of ${total}`);
  return { events: accepted, seconds: Number(seconds.toFixed(2)), perSecond: Math.round(accepted / seconds) };
}

/** Activates the signal and waits until its held events are all delivered; answers delivered events per second. */
async function deliver(call: Call, signalId: number, total: number): Promise<Phase> {
  const started = performance.now();
  await call('PATCH', `/api/v1/signals/${signalId}/`, { status: 1 });
  for (;;) {
    const { delivery } = (await call('GET', `/api/v1/signals/${signalId}/`)) as { delivery: { delivered: number; failed: number } };
    if (delivery.failed > 0) throw new Error(`${delivery.failed} events failed`);
    if (delivery.delivered >= total) break;
    if (performance.now() - started > 600_000) throw new Error(`only ${delivery.delivered} of ${total} delivered in 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const seconds = (performance.now() - started) / 1000;
  return { events: total, seconds: Number(seconds.toFixed(2)), perSecond: Math.round(total / seconds) };
}

await main();
