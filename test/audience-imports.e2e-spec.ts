import { Tenant } from '../src/common/tenancy/tenant.js';
import { TenantContext } from '../src/common/tenancy/tenant-context.js';
import { ImportsService } from '../src/imports/imports.service.js';
import { bearer, createUser, createWorkspace, login, send, type Workspace } from './support/factories.js';
import { type ImportBody, postImport } from './support/imports.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/** SPEC 10.1 and 10.2: imports with target=audience add, remove or replace an upload audience's members. */
describe('audience imports', () => {
  let api: TestApp;
  let workspace: Workspace;
  let auth: Record<string, string>;

  // No workers: each test runs the merge job itself, so it can act between the upload and the merge.
  beforeAll(async () => {
    api = await startTestApp({ WORKER_CONCURRENCY: '0' });
    workspace = await createWorkspace(api);
    auth = bearer((await login(api, await createUser(api, workspace, { role: 'editor' }))).access);
  });
  afterAll(() => api.close());

  const audience = async (source_type: string, extra: object = {}) => {
    const response = await api.request(
      '/api/v1/audiences/',
      send('POST', { name: `Imported ${Math.random()}`, source_type, ...extra }, auth),
    );
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: number }).id;
  };
  const members = async (id: number) => {
    const page = (await (
      await api.request(`/api/v1/audiences/${id}/members/?ordering=external_id&page_size=1000`, { headers: auth })
    ).json()) as {
      count: number;
      results: { external_id: string }[];
    };
    return page.results.map((person) => person.external_id);
  };
  const csv = (ids: string[], extra = '') => `external_id,plan\n${ids.map((id) => `${id},${extra}`).join('\n')}\n`;
  const upload = async (id: number, mode: string, body: string): Promise<number> => {
    const response = await postImport(api, auth, body, 'text/csv', `target=audience&audience=${id}&mode=${mode}`);
    expect(response.status).toBe(202);
    const queued = (await response.json()) as ImportBody & { target: string; audience: number; mode: string };
    expect(queued).toMatchObject({ target: 'audience', audience: id, mode, status: 'queued' });
    return queued.id;
  };
  /** Runs the import's merge job as a worker would, and answers the import. */
  const merged = async (importId: number): Promise<ImportBody> => {
    await api.app.get(TenantContext).run(Tenant.forOperator(workspace.customerId), () => api.app.get(ImportsService).merge(importId));
    return (await (await api.request(`/api/v1/imports/${importId}/`, { headers: auth })).json()) as ImportBody;
  };
  const imported = async (id: number, mode: string, body: string) => merged(await upload(id, mode, body));

  it('adds the file’s people (upserted first), removes them, and replaces the members with them', async () => {
    const id = await audience('upload');
    expect((await imported(id, 'add', csv(['a-1', 'a-2', 'a-3'], 'gold'))).status).toBe('succeeded');
    expect(await members(id)).toEqual(['a-1', 'a-2', 'a-3']);
    const person = (await (await api.request('/api/v1/people/?external_id=a-1', { headers: auth })).json()) as {
      results: { traits: object; audiences: number[] }[];
    };
    expect(person.results[0]).toMatchObject({ traits: { plan: 'gold' }, audiences: [id] });

    // A removal names people and creates none: a-9 does not exist and is not made.
    expect((await imported(id, 'remove', csv(['a-2', 'a-9']))).status).toBe('succeeded');
    expect(await members(id)).toEqual(['a-1', 'a-3']);
    expect(((await (await api.request('/api/v1/people/?external_id=a-9', { headers: auth })).json()) as { count: number }).count).toBe(0);

    expect((await imported(id, 'replace', csv(['a-3', 'b-1']))).status).toBe('succeeded');
    expect(await members(id)).toEqual(['a-3', 'b-1']);
    const detail = (await (await api.request(`/api/v1/audiences/${id}/`, { headers: auth })).json()) as { size: number };
    expect(detail.size).toBe(2);
  });

  it('remove matches a row without external_id by its email or phone, among the members only; one with its own by that alone', async () => {
    const id = await audience('upload');
    const people = 'external_id,email,phone\ncrm-i-1,import.one@example.com,\ncrm-i-2,,+14155550125\ncrm-i-3,import.three@example.com,\n';
    expect((await imported(id, 'add', people)).status).toBe('succeeded');
    const outsider = await api.request(
      '/api/v1/people/batch/',
      send('POST', { people: [{ external_id: 'crm-i-outsider', identifiers: { email: 'import.outsider@example.com' } }] }, auth),
    );
    expect(outsider.status).toBe(200);

    const removal =
      'external_id,email,phone\n,import.one@example.com,\n,,+14155550125\n,import.outsider@example.com,\ncrm-i-9,import.three@example.com,\n';
    expect(await imported(id, 'remove', removal)).toMatchObject({ status: 'succeeded', rows_accepted: 4, rows_rejected: 0 });
    expect(await members(id)).toEqual(['crm-i-3']);
    const detail = (await (await api.request(`/api/v1/audiences/${id}/`, { headers: auth })).json()) as { size: number };
    expect(detail.size).toBe(1);
  });

  it('replace is atomic: a reader during the merge sees the old members or the new, never a mix', async () => {
    const id = await audience('upload');
    const before = Array.from({ length: 2000 }, (_, index) => `old-${String(index).padStart(4, '0')}`);
    const after = Array.from({ length: 2000 }, (_, index) => `new-${String(index).padStart(4, '0')}`);
    expect((await imported(id, 'add', csv(before))).status).toBe('succeeded');
    const seen = new Set<string>();
    let reading = true;
    const reader = (async () => {
      while (reading) {
        const [row] = await api.dataSource.query(
          `SELECT count(*)::int AS n, count(*) FILTER (WHERE p.external_id LIKE 'old-%')::int AS old
             FROM audience_members m JOIN people p ON p.customer_id = m.customer_id AND p.id = m.person_id WHERE m.audience_id = $1`,
          [id],
        );
        seen.add(`${row.n}/${row.old}`);
      }
    })();
    const done = await imported(id, 'replace', csv(after));
    reading = false;
    await reader;
    expect(done.status).toBe('succeeded');
    expect([...seen].every((state) => state === '2000/2000' || state === '2000/0')).toBe(true);
    expect(seen.has('2000/0')).toBe(true);
    // Pages hold 100 at most: the first page, and the size.
    expect(await members(id)).toEqual(after.slice(0, 100));
    const detail = (await (await api.request(`/api/v1/audiences/${id}/`, { headers: auth })).json()) as { size: number };
    expect(detail.size).toBe(2000);
  });

  it('refuses a missing or stray audience and mode (400), another source type or an archived audience (409)', async () => {
    const rules = await audience('rules');
    const upload = await audience('upload');
    const status = async (query: string) => (await postImport(api, auth, csv(['x']), 'text/csv', query)).status;
    const errors = async (query: string) =>
      Object.keys(((await (await postImport(api, auth, csv(['x']), 'text/csv', query)).json()) as { errors: object }).errors).sort();
    expect(await errors('target=audience')).toEqual(['audience', 'mode']);
    expect(await errors(`target=people&audience=${upload}&mode=add`)).toEqual(['audience', 'mode']);
    expect(await errors('target=audience&audience=99999999&mode=add')).toEqual(['audience']);
    expect(await status(`target=audience&audience=${rules}&mode=add`)).toBe(409);
    await api.request(`/api/v1/audiences/${upload}/`, send('PATCH', { status: 'archived' }, auth));
    expect(await status(`target=audience&audience=${upload}&mode=add`)).toBe(409);
  });

  it('fails an import whose audience was deleted before its merge, changing nothing', async () => {
    const id = await audience('upload');
    const importId = await upload(id, 'add', csv(['d-1']));
    expect((await api.request(`/api/v1/audiences/${id}/`, send('DELETE', undefined, auth))).status).toBe(204);
    const done = await merged(importId);
    expect(done.status).toBe('failed');
    expect(done.errors_sample.at(-1)).toEqual({ line: 1, errors: { file: ['audience_unavailable'] } });
    expect(((await (await api.request('/api/v1/people/?external_id=d-1', { headers: auth })).json()) as { count: number }).count).toBe(0);
    expect(await api.dataSource.query('SELECT 1 FROM import_rows WHERE import_id = $1', [importId])).toEqual([]);
  });
});
