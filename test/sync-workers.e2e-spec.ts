import { ConnectionGrants } from '../src/connections/oauth/connection-grants.js';
import { type FakeMetaAds, startFakeMetaAds } from './support/fake-ad-platforms.js';
import { bearer, createUser, createWorkspace, inWorkspace, login, send } from './support/factories.js';
import { startService, type ServiceProcess } from './support/service-process.js';
import { startTestApp, TEST_ENV, type TestApp } from './support/test-app.js';

/**
 * SPEC 10.3, "Exactly once, never half-recorded", across worker processes: the API process runs no
 * worker; syncs run in service processes on the same database, against a Meta fake that holds each
 * members request (a slow platform). A worker killed mid-run leaves only what Meta accepted
 * recorded, and another worker resumes the run; two workers never send to one destination at once.
 */

const META_ACCOUNT = '555000222';
const MEMBERS = 1200;

interface Run {
  id: number;
  status: string;
  added: number;
  attempts: number;
  dry_run: boolean;
  started_at: string | null;
  finished_at: string | null;
  platform_audience_id: string | null;
}

describe('sync runs across worker processes', () => {
  let meta: FakeMetaAds;
  let api: TestApp;
  let auth: Record<string, string>;
  let connection: number;
  const workers: ServiceProcess[] = [];

  const workerEnv = () => ({
    ...TEST_ENV,
    DATABASE_URL: api.databaseUrl,
    META_APP_ID: meta.appId,
    META_APP_SECRET: meta.appSecret,
    META_DIALOG_URL: `${meta.url}/v25.0/dialog/oauth`,
    META_GRAPH_URL: `${meta.url}/v25.0`,
    // Small bodies, so a run is many requests (about 30 of 40 people here).
    META_MAX_REQUEST_BYTES: '4000',
    WORKER_CONCURRENCY: '2',
    JOB_POLL_INTERVAL_MS: '100',
    JOB_RESCUE_INTERVAL_SECONDS: '1',
    MEMBERSHIP_DEBOUNCE_SECONDS: '0',
    SYNC_DEBOUNCE_SECONDS: '3600',
    SYNC_INTERVAL_HOURS: '0',
    CONNECTION_SWEEP_INTERVAL_SECONDS: '0',
    SHUTDOWN_TIMEOUT_MS: '1000',
    // startService waits for the `listening` log line.
    LOG_LEVEL: 'info',
  });

  beforeAll(async () => {
    meta = await startFakeMetaAds();
    meta.accounts = [{ account_id: META_ACCOUNT, name: 'Shop' }];
    api = await startTestApp({
      META_APP_ID: meta.appId,
      META_APP_SECRET: meta.appSecret,
      META_DIALOG_URL: `${meta.url}/v25.0/dialog/oauth`,
      META_GRAPH_URL: `${meta.url}/v25.0`,
      MEMBERSHIP_DEBOUNCE_SECONDS: '0',
      SYNC_DEBOUNCE_SECONDS: '3600',
    });
    const workspace = await createWorkspace(api);
    const admin = await createUser(api, workspace, { role: 'admin' });
    auth = bearer((await login(api, admin)).access);
    const scopes = ['ads_management', 'ads_read'];
    const [connected] = await inWorkspace(
      api,
      workspace.customerId,
      (grants) =>
        grants.connect(
          'meta_ads',
          [{ externalAccountId: META_ACCOUNT, name: 'Shop' }],
          {
            accessToken: meta.issueAccessToken(scopes),
            refreshToken: null,
            expiresAt: null,
            scopes,
          },
          admin.id,
        ),
      ConnectionGrants,
    );
    connection = connected!.id;
    const people = Array.from({ length: MEMBERS }, (_, index) => ({
      external_id: `worker-${index}`,
      identifiers: { email: `worker${index}@example.org` },
      traits: { plan: 'kill' },
    }));
    for (let start = 0; start < people.length; start += 1000) {
      const written = await api.request('/api/v1/people/batch/', send('POST', { people: people.slice(start, start + 1000) }, auth));
      expect(written.status).toBe(200);
    }
  });
  afterAll(async () => {
    for (const worker of workers) await worker.kill();
    await api.close();
    await meta.close();
  });

  const call = async (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) => {
    const response = await api.request(path, send(method, body, auth));
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 60_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  const run = async (id: number) => (await call('GET', `/api/v1/syncs/${id}/`)).body as unknown as Run;
  const sentRows = async (audience: number) =>
    Number(
      (
        (await api.dataSource.query('SELECT count(*)::int AS count FROM sync_sent_members WHERE audience_id = $1', [audience])) as {
          count: number;
        }[]
      )[0]!.count,
    );

  async function activeAudience(name: string): Promise<number> {
    const created = await call('POST', '/api/v1/audiences/', {
      name,
      source_type: 'upload',
      connections: [connection],
      status: 'active',
    });
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    // Members through the upload route, in the API process; the sync is started by hand below.
    const people = Array.from({ length: MEMBERS }, (_, index) => ({ external_id: `worker-${index}` }));
    for (let start = 0; start < people.length; start += 1000) {
      const added = await call('POST', `/api/v1/audiences/${id}/members/`, { action: 'add', people: people.slice(start, start + 1000) });
      expect(added.status).toBe(200);
    }
    return id;
  }

  it('a worker killed mid-run leaves only what Meta accepted recorded, and another worker resumes the run to the end', async () => {
    const audience = await activeAudience('Killed mid-run');
    meta.customAudiences.usersDelayMs = 150;
    const started = await call('POST', '/api/v1/syncs/', { audience });
    const runId = (started.body.runs as Run[])[0]!.id;
    workers.push(await startService(workerEnv()));
    const metaAudience = (
      await waitFor(
        () => run(runId),
        (value) => value.platform_audience_id !== null,
        'the list',
      )
    ).platform_audience_id!;
    const accepted = () => meta.customAudiences.requests.filter((request) => request.audienceId === metaAudience);
    await waitFor(
      async () => accepted().length,
      (count) => count >= 5,
      'five accepted requests',
    );
    await workers[0]!.kill();
    // Nothing is recorded that Meta did not take: every recorded person is in a request Meta accepted.
    const takenBeforeKill = new Set(accepted().flatMap((request) => request.data.map((row) => row.join(','))));
    const recorded = await sentRows(audience);
    expect(recorded).toBeGreaterThan(0);
    expect(recorded).toBeLessThanOrEqual(takenBeforeKill.size);
    expect((await run(runId)).status).toBe('running');

    meta.customAudiences.usersDelayMs = 0;
    workers.push(await startService(workerEnv()));
    const finished = await waitFor(
      () => run(runId),
      (value) => ['succeeded', 'partially_failed', 'failed'].includes(value.status),
      'the resumed run',
    );
    expect(finished).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(await sentRows(audience)).toBe(MEMBERS);
    const held = meta.customAudiences.audiences.get(metaAudience)!.rows;
    expect(held.size).toBe(MEMBERS);
  }, 120_000);

  it('two workers never send to one destination at once: a dry run waits for the real run of its destination', async () => {
    const audience = await activeAudience('Two workers');
    while (workers.length < 2) workers.push(await startService(workerEnv()));
    meta.customAudiences.usersDelayMs = 50;
    const real = ((await call('POST', '/api/v1/syncs/', { audience })).body.runs as Run[])[0]!.id;
    const dry = ((await call('POST', '/api/v1/syncs/', { audience, dry_run: true })).body.runs as Run[])[0]!.id;
    const done = (value: Run) => ['succeeded', 'partially_failed', 'failed'].includes(value.status);
    const realRun = await waitFor(() => run(real), done, 'the real run');
    const dryRun = await waitFor(() => run(dry), done, 'the dry run');
    expect(realRun.status).toBe('succeeded');
    expect(dryRun).toMatchObject({ status: 'succeeded', dry_run: true });
    // One job queue per destination: the dry run started after the real one had ended.
    expect(new Date(dryRun.started_at!).getTime()).toBeGreaterThanOrEqual(new Date(realRun.finished_at!).getTime());
    expect(meta.customAudiences.inFlight.get(realRun.platform_audience_id!)!.most).toBe(1);
  }, 120_000);
});
