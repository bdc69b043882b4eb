import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_PEOPLE, seedDemoData } from '../src/demo/demo-data.js';
import { ensureDemoWorkspace } from '../src/demo/demo-workspace.js';
import { bearer, login } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/** What `npm start` does on the first start of an empty database (main.ts), against a real app. */
describe('demo workspace', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp();
  });
  afterAll(() => api.close());

  it('is created once, with sample data a newcomer can browse, and only on an empty database', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'demo-'));
    const demo = await ensureDemoWorkspace(api.dataSource, dataDir);
    expect(demo).toMatchObject({ email: 'admin@demo.example', created: true });
    await seedDemoData(api.app, demo!);

    const access = (await login(api, demo!)).access;
    const list = async (path: string) =>
      (
        (await (await api.request(`/api/v1/${path}/?page_size=100`, { headers: bearer(access) })).json()) as {
          count: number;
          results: { status: string | number; customer: number }[];
        }
      ).results;
    const [audiences, signals, models, connections] = await Promise.all(
      ['audiences', 'signals', 'ai-model-instances', 'connections'].map(list),
    );
    expect(audiences).toHaveLength(4);
    expect(models).toHaveLength(3);
    expect(signals).toHaveLength(3);
    expect(connections).toHaveLength(1);
    // Some of it live: an active audience, ready models, and a signal active on the connection.
    expect(audiences.map((audience) => audience.status)).toContain('active');
    expect(models.filter((model) => model.status === 'ready')).toHaveLength(2);
    expect(signals.map((signal) => signal.status)).toContain(1);
    for (const item of [...audiences, ...signals, ...models, ...connections]) expect(item.customer).toBe(demo!.customer);
    // People with scores, and an upload list: the audiences have members to compute.
    const people = (await (await api.request('/api/v1/people/?page_size=1', { headers: bearer(access) })).json()) as { count: number };
    expect(people.count).toBe(DEMO_PEOPLE);
    const [scores] = await api.dataSource.query('SELECT count(*)::int AS n FROM model_scores WHERE customer_id = $1', [demo!.customer]);
    expect(scores.n).toBe(2 * DEMO_PEOPLE);
    const upload = audiences.find((audience) => (audience as { source_type?: string }).source_type === 'upload') as unknown as {
      size: number;
    };
    expect(upload.size).toBe(DEMO_PEOPLE / 4);

    // Later starts read the saved credentials and seed nothing; another data directory on a
    // database that has workspaces gets no demo at all.
    const again = await ensureDemoWorkspace(api.dataSource, dataDir);
    expect(again).toEqual({ customer: demo!.customer, email: demo!.email, password: demo!.password });
    expect(await ensureDemoWorkspace(api.dataSource, mkdtempSync(join(tmpdir(), 'demo-')))).toBeUndefined();
  });
});
