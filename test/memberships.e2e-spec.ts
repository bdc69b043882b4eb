import { bearer, createModelInstance, createUser, createWorkspace, login, send, type Workspace } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

interface AudienceBody {
  id: number;
  size: number | null;
  members_updated_at: string | null;
}
interface Page<T> {
  count: number;
  results: T[];
}

/** People with traits of every type, and one without traits, as the rules tests read them. */
const PEOPLE = [
  { external_id: 'p-pro-100', traits: { plan: 'pro', ltv: 100, vip: true, city: 'Hamburg' }, consent: { ad_personalization: 'granted' } },
  { external_id: 'p-pro-50', traits: { plan: 'pro', ltv: 50, vip: false, city: 'Berlin' }, consent: { ad_personalization: 'denied' } },
  { external_id: 'p-free-str', traits: { plan: 'free', ltv: '100', city: 'Bergen' }, consent: { ad_user_data: 'granted' } },
  { external_id: 'p-basic-7', traits: { plan: 'basic', ltv: 7 } },
  { external_id: 'p-none', traits: {} },
];

describe('audience members (SPEC 10.2)', () => {
  let api: TestApp;
  let workspace: Workspace;
  let auth: Record<string, string>;

  beforeAll(async () => {
    api = await startTestApp({ WORKER_CONCURRENCY: '2', MEMBERSHIP_DEBOUNCE_SECONDS: '0', JOB_POLL_INTERVAL_MS: '100' });
    workspace = await createWorkspace(api);
    auth = bearer((await login(api, await createUser(api, workspace, { role: 'editor' }))).access);
    const written = await api.request('/api/v1/people/batch/', send('POST', { people: PEOPLE }, auth));
    expect(await written.json()).toMatchObject({ created: PEOPLE.length, rejected: [] });
  });
  afterAll(() => api.close());

  const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, headers = auth) => {
    const response = await api.request(path, send(method, body, headers));
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  /** Waits until the audience's members were computed after `since` (ISO), and answers the audience. */
  async function computed(id: number, since = '', headers = auth): Promise<AudienceBody> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { body } = await call('GET', `/api/v1/audiences/${id}/`, undefined, headers);
      const audience = body as AudienceBody;
      if (audience.members_updated_at !== null && audience.members_updated_at > since) return audience;
      if (Date.now() > deadline) throw new Error(`audience ${id} was not computed: ${JSON.stringify(audience)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function memberIds(id: number, headers = auth): Promise<string[]> {
    const { status, body } = await call('GET', `/api/v1/audiences/${id}/members/?ordering=external_id&page_size=1000`, undefined, headers);
    expect(status).toBe(200);
    return (body as Page<{ external_id: string }>).results.map((person) => person.external_id);
  }

  async function rulesAudience(rules: object, name = `Rules ${Math.random()}`): Promise<number> {
    const { status, body } = await call('POST', '/api/v1/audiences/', { name, source_type: 'rules', rules });
    expect(status).toBe(201);
    expect(body).toMatchObject({ size: null, members_updated_at: null });
    return body.id as number;
  }

  it.each<[string, object, string[]]>([
    ['eq on a string', { trait: 'plan', op: 'eq', value: 'pro' }, ['p-pro-100', 'p-pro-50']],
    ['a number compares with numbers only', { trait: 'ltv', op: 'gte', value: 50 }, ['p-pro-100', 'p-pro-50']],
    ['a string compares with strings only', { trait: 'ltv', op: 'eq', value: '100' }, ['p-free-str']],
    ['lt', { trait: 'ltv', op: 'lt', value: 50 }, ['p-basic-7']],
    ['neq leaves out a missing trait and another type', { trait: 'ltv', op: 'neq', value: 100 }, ['p-basic-7', 'p-pro-50']],
    ['booleans', { trait: 'vip', op: 'eq', value: false }, ['p-pro-50']],
    [
      'not inverts exactly (a missing trait is not "pro")',
      { not: { trait: 'plan', op: 'eq', value: 'pro' } },
      ['p-basic-7', 'p-free-str', 'p-none'],
    ],
    ['not_in leaves out a missing trait', { trait: 'plan', op: 'not_in', value: ['pro'] }, ['p-basic-7', 'p-free-str']],
    ['contains', { trait: 'city', op: 'contains', value: 'erg' }, ['p-free-str']],
    ['exists', { trait: 'vip', op: 'exists' }, ['p-pro-100', 'p-pro-50']],
    ['not_exists', { trait: 'plan', op: 'not_exists' }, ['p-none']],
    ['consent', { consent: 'ad_personalization', op: 'eq', value: 'granted' }, ['p-pro-100']],
    ['consent in', { consent: 'ad_user_data', op: 'in', value: ['granted'] }, ['p-free-str']],
    [
      'all and any',
      {
        all: [
          {
            any: [
              { trait: 'plan', op: 'eq', value: 'pro' },
              { trait: 'plan', op: 'eq', value: 'basic' },
            ],
          },
          { trait: 'ltv', op: 'lte', value: 50 },
        ],
      },
      ['p-basic-7', 'p-pro-50'],
    ],
    ['{} selects nobody', {}, []],
  ])('rules: %s', async (_name, rules, expected) => {
    const id = await rulesAudience(rules);
    const audience = await computed(id);
    expect(await memberIds(id)).toEqual(expected);
    expect(audience.size).toBe(expected.length);
  });

  it('rules: in with 1,000 values', async () => {
    const values = Array.from({ length: 999 }, (_, index) => `plan-${index}`).concat('basic');
    const id = await rulesAudience({ trait: 'plan', op: 'in', value: values });
    expect((await computed(id)).size).toBe(1);
    expect(await memberIds(id)).toEqual(['p-basic-7']);
  });

  it('a tree outside the grammar is a 400 with every error under its rules path', async () => {
    const { status, body } = await call('POST', '/api/v1/audiences/', {
      name: '',
      source_type: 'rules',
      rules: { all: [{ trait: 'plan', op: 'eq', value: 'pro' }, { trait: 'plan', op: 'like', value: 'p' }, { any: [] }] },
    });
    expect(status).toBe(400);
    expect(Object.keys(body.errors).sort()).toEqual(['name', 'rules.all.1.op', 'rules.all.2.any']);
  });

  it('an audience saved before the grammar stays readable and cannot be activated until its rules are fixed', async () => {
    const id = await rulesAudience({ trait: 'plan', op: 'exists' });
    await api.dataSource.query(`UPDATE audiences SET rules = '{"country": "DE"}' WHERE id = $1`, [id]);
    expect((await call('GET', `/api/v1/audiences/${id}/`)).body.rules).toEqual({ country: 'DE' });
    const refused = await call('PATCH', `/api/v1/audiences/${id}/`, { status: 'active' });
    expect(refused.status).toBe(400);
    expect(Object.keys(refused.body.errors)).toEqual(['rules']);
    const fixed = await call('PATCH', `/api/v1/audiences/${id}/`, { status: 'active', rules: { trait: 'plan', op: 'eq', value: 'basic' } });
    expect(fixed.status).toBe(200);
    const since = fixed.body.updated_at as string;
    expect((await computed(id, since)).size).toBe(1);
  });

  it('a person’s audiences and ?audience= agree with the members', async () => {
    const id = await rulesAudience({ trait: 'plan', op: 'eq', value: 'free' });
    await computed(id);
    const listed = (await call('GET', `/api/v1/people/?audience=${id}`)).body as Page<{
      id: number;
      external_id: string;
      audiences: number[];
    }>;
    expect(listed.results.map((person) => person.external_id)).toEqual(['p-free-str']);
    expect(listed.results[0].audiences).toContain(id);
    const person = (await call('GET', `/api/v1/people/${listed.results[0].id}/`)).body as { audiences: number[] };
    expect(person.audiences).toContain(id);
  });

  it('upload audiences: add upserts people and makes them members, remove takes them out; other sources are a 409', async () => {
    const created = await call('POST', '/api/v1/audiences/', { name: `Upload ${Math.random()}`, source_type: 'upload' });
    const id = created.body.id as number;
    const added = await call('POST', `/api/v1/audiences/${id}/members/`, {
      action: 'add',
      people: [
        { external_id: 'u-1', traits: { plan: 'gold' } },
        { identifiers: { email: 'upload.two@example.com' } },
        { external_id: 'p-none' },
        { identifiers: { email: 'nope' } },
      ],
    });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ added: 3, removed: 0, rejected: [{ index: 3, errors: { 'identifiers.email': ['invalid_email'] } }] });
    expect((await call('GET', `/api/v1/audiences/${id}/`)).body.size).toBe(3);
    const removed = await call('POST', `/api/v1/audiences/${id}/members/`, {
      action: 'remove',
      people: [{ identifiers: { email: 'Upload.Two@example.com' } }, { external_id: 'p-none' }, { external_id: 'not-a-member' }],
    });
    expect(removed.body).toEqual({ added: 0, removed: 2, rejected: [] });
    expect(await memberIds(id)).toEqual(['u-1']);
    expect((await call('GET', `/api/v1/audiences/${id}/`)).body.size).toBe(1);

    // Members have no foreign key to cascade: the delete takes them along itself.
    expect((await call('DELETE', `/api/v1/audiences/${id}/`)).status).toBe(204);
    expect(await api.dataSource.query('SELECT person_id FROM audience_members WHERE audience_id = $1', [id])).toEqual([]);

    const rules = await rulesAudience({ trait: 'plan', op: 'exists' });
    const refused = await call('POST', `/api/v1/audiences/${rules}/members/`, { action: 'add', people: [{ external_id: 'x' }] });
    expect(refused.status).toBe(409);
  });

  it('remove matches a row without external_id by any of its email or phone hashes, among the audience’s members only', async () => {
    const id = (await call('POST', '/api/v1/audiences/', { name: `Upload ${Math.random()}`, source_type: 'upload' })).body.id as number;
    const added = await call('POST', `/api/v1/audiences/${id}/members/`, {
      action: 'add',
      people: [
        { external_id: 'crm-rm-1', identifiers: { email: 'remove.me@example.com', phone: '+14155550123' } },
        { identifiers: { email: 'by.phone@example.com', phone: '+14155550124' } },
        { external_id: 'crm-rm-3', identifiers: { email: 'kept@example.com' } },
        { external_id: 'crm-rm-4', identifiers: { email: 'by.id@example.com' } },
      ],
    });
    expect(added.body).toEqual({ added: 4, removed: 0, rejected: [] });
    const outsider = await call('POST', '/api/v1/people/batch/', {
      people: [{ external_id: 'crm-rm-outsider', identifiers: { email: 'outsider@example.com' } }],
    });
    expect(outsider.body).toEqual({ created: 1, updated: 0, rejected: [] });
    const remove = (people: object[]) => call('POST', `/api/v1/audiences/${id}/members/`, { action: 'remove', people });

    // By email alone, though the person has their own external_id; a second row naming them counts once.
    expect((await remove([{ identifiers: { email: 'remove.me@example.com' } }, { identifiers: { phone: '+14155550123' } }])).body).toEqual({
      added: 0,
      removed: 1,
      rejected: [],
    });
    // By phone alone: the person's id was derived from their email, so only the hash names them.
    expect((await remove([{ identifiers: { phone: '+14155550124' } }])).body).toEqual({ added: 0, removed: 1, rejected: [] });
    // A person who is not a member is not removed from anything, and stays a person.
    expect((await remove([{ identifiers: { email: 'outsider@example.com' } }])).body).toEqual({ added: 0, removed: 0, rejected: [] });
    expect((await call('GET', '/api/v1/people/?external_id=crm-rm-outsider')).body.count).toBe(1);
    // A row with its own external_id names that person only, not the members holding its hashes.
    expect((await remove([{ external_id: 'crm-rm-4', identifiers: { email: 'kept@example.com' } }])).body).toEqual({
      added: 0,
      removed: 1,
      rejected: [],
    });
    expect(await memberIds(id)).toEqual(['crm-rm-3']);
    expect((await call('GET', `/api/v1/audiences/${id}/`)).body.size).toBe(1);
  });

  it('a people write changes a rules audience’s members, and an erasure takes the person out', async () => {
    const id = await rulesAudience({ trait: 'plan', op: 'eq', value: 'enterprise' });
    const first = await computed(id);
    expect(first.size).toBe(0);
    await call('POST', '/api/v1/people/batch/', { people: [{ external_id: 'p-ent', traits: { plan: 'enterprise' } }] });
    const second = await computed(id, first.members_updated_at!);
    expect(second.size).toBe(1);
    const person = (await call('GET', '/api/v1/people/?external_id=p-ent')).body.results[0] as { id: number };
    expect((await call('DELETE', `/api/v1/people/${person.id}/`)).status).toBe(204);
    const third = await computed(id, second.members_updated_at!);
    expect(third.size).toBe(0);
    expect(await memberIds(id)).toEqual([]);
    expect(await api.dataSource.query('SELECT audience_id FROM audience_members WHERE person_id = $1', [person.id])).toEqual([]);
  });

  it('model audiences: the scores of the current version at or above min_score, once the model is ready', async () => {
    const model = await createModelInstance(api, workspace, { status: 'training' });
    const scored = await call('POST', `/api/v1/ai-model-instances/${model.id}/scores/`, {
      scores: [
        { external_id: 'p-pro-100', score: 0.9 },
        { external_id: 'p-pro-50', score: 0.2 },
        { external_id: 'p-basic-7', score: 0.1 },
        { external_id: 'p-basic-7', score: 0.85 },
        { external_id: 'nobody', score: 0.99 },
      ],
    });
    expect(scored.status).toBe(200);
    expect(scored.body).toEqual({ written: 3, unknown_external_ids: ['nobody'] });
    const created = await call('POST', '/api/v1/audiences/', {
      name: `Model ${Math.random()}`,
      source_type: 'model',
      model_instance: model.id,
      min_score: 0.8,
    });
    const id = created.body.id as number;
    // Training: the audience keeps the members it had (none yet) and is not computed.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await call('GET', `/api/v1/audiences/${id}/`)).body.members_updated_at).toBeNull();
    expect((await call('PATCH', `/api/v1/ai-model-instances/${model.id}/`, { status: 'ready' })).status).toBe(200);
    expect((await computed(id)).size).toBe(2);
    expect(await memberIds(id)).toEqual(['p-basic-7', 'p-pro-100']);

    const bad = await call('POST', `/api/v1/ai-model-instances/${model.id}/scores/`, {
      scores: [{ external_id: 'p-none', score: 1.5 }, { score: 0.5 }],
    });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['scores.0.score', 'scores.1.external_id']);
  });

  it('a rule never selects another workspace’s people, even with identical traits', async () => {
    const other = await createWorkspace(api);
    const otherAuth = bearer((await login(api, await createUser(api, other, { role: 'editor' }))).access);
    await call('POST', '/api/v1/people/batch/', { people: [{ external_id: 'p-pro-100', traits: { plan: 'pro', ltv: 100 } }] }, otherAuth);
    const mine = await rulesAudience({ trait: 'plan', op: 'eq', value: 'pro' });
    const theirs = (
      await call(
        'POST',
        '/api/v1/audiences/',
        { name: 'Pro', source_type: 'rules', rules: { trait: 'plan', op: 'eq', value: 'pro' } },
        otherAuth,
      )
    ).body.id as number;
    expect((await computed(mine)).size).toBe(2);
    expect((await computed(theirs, '', otherAuth)).size).toBe(1);
    expect(await memberIds(theirs, otherAuth)).toEqual(['p-pro-100']);
    const rows: { customer_id: string; n: string }[] = await api.dataSource.query(
      `SELECT m.customer_id::text, count(*)::text AS n FROM audience_members m JOIN people p ON p.customer_id = m.customer_id AND p.id = m.person_id
        WHERE m.audience_id = $1 GROUP BY 1`,
      [theirs],
    );
    expect(rows).toEqual([{ customer_id: String(other.customerId), n: '1' }]);
    // Another workspace's audience reads like one that does not exist.
    expect((await call('GET', `/api/v1/audiences/${theirs}/members/`)).status).toBe(404);
  });
});

describe('audience members follow people within the debounce (SPEC 10.2)', () => {
  let api: TestApp;
  afterAll(() => api.close());

  it('a burst of people writes gives one recompute per audience, a debounce after the last write', async () => {
    api = await startTestApp({ WORKER_CONCURRENCY: '1', MEMBERSHIP_DEBOUNCE_SECONDS: '1', JOB_POLL_INTERVAL_MS: '100' });
    const workspace = await createWorkspace(api);
    const auth = bearer((await login(api, await createUser(api, workspace, { role: 'editor' }))).access);
    const created = await api.request(
      '/api/v1/audiences/',
      send('POST', { name: 'Gold', source_type: 'rules', rules: { trait: 'tier', op: 'eq', value: 'gold' } }, auth),
    );
    const id = ((await created.json()) as { id: number }).id;
    const audience = async () => (await (await api.request(`/api/v1/audiences/${id}/`, { headers: auth })).json()) as AudienceBody;
    const until = async (done: (body: AudienceBody) => boolean) => {
      const deadline = Date.now() + 20_000;
      for (let body = await audience(); ; body = await audience()) {
        if (done(body)) return body;
        if (Date.now() > deadline) throw new Error(`not reached: ${JSON.stringify(body)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const first = await until((body) => body.members_updated_at !== null);
    expect(first.size).toBe(0);

    const recomputes = async () =>
      Number(
        (
          await api.dataSource.query(
            `SELECT count(*)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
              WHERE t.identifier = 'memberships.workspace-changed'`,
          )
        )[0].n,
      );
    const started = Date.now();
    for (let index = 0; index < 5; index++) {
      const written = await api.request(
        '/api/v1/people/batch/',
        send('POST', { people: [{ external_id: `gold-${index}`, traits: { tier: 'gold' } }] }, auth),
      );
      expect(written.status).toBe(200);
    }
    // Five writes, one waiting fan-out job for the workspace (each write moved it later).
    expect(await recomputes()).toBe(1);
    const second = await until((body) => body.size === 5);
    // Not before the debounce after the first write, and well within a few debounces after the last.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(second.members_updated_at! > first.members_updated_at!).toBe(true);
  });
});
