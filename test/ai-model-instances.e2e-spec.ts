import { bearer, createApiKey, createUser, createWorkspace, login, send, type Workspace } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const BASE = '/api/v1/ai-model-instances/';
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

type Model = Record<string, unknown> & { id: number; status: string; version: number; name: string; updated_at: string };

describe('AI model instances (SPEC section 3)', () => {
  let api: TestApp;
  let workspace: Workspace;
  let auth: Record<string, string>;

  beforeAll(async () => {
    api = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    workspace = await createWorkspace(api);
    const editor = await createUser(api, workspace, { role: 'editor' });
    auth = bearer((await login(api, editor)).access);
  });
  afterAll(() => api.close());

  const get = (path: string, headers = auth) => api.request(path, { headers });
  const post = (body: unknown, headers = auth) => api.request(BASE, send('POST', body, headers));
  const patch = (id: number, body: unknown, headers = auth) => api.request(`${BASE}${id}/`, send('PATCH', body, headers));
  const remove = (id: number, headers = auth) => api.request(`${BASE}${id}/`, send('DELETE', undefined, headers));

  let counter = 0;
  const name = () => `Model ${++counter} ${Date.now()}`;
  const valid = (overrides: Record<string, unknown> = {}) => ({ name: name(), model_type: 'churn', base_model: 'gbm-v3', ...overrides });

  async function created(overrides: Record<string, unknown> = {}): Promise<Model> {
    const response = await post(valid(overrides));
    expect(response.status).toBe(201);
    return (await response.json()) as Model;
  }

  async function patched(id: number, body: Record<string, unknown>, headers = auth): Promise<Model> {
    const response = await patch(id, body, headers);
    expect(response.status).toBe(200);
    return (await response.json()) as Model;
  }

  async function errorsOf(response: Response, status = 400): Promise<Record<string, string[]>> {
    expect(response.status).toBe(status);
    const body = (await response.json()) as { code: string; errors: Record<string, string[]> };
    expect(body.code).toBe('validation_error');
    return body.errors;
  }

  async function codeOf(response: Response): Promise<string> {
    return ((await response.json()) as { code: string }).code;
  }

  const nested = (levels: number): Record<string, unknown> => {
    let value: Record<string, unknown> = { leaf: true };
    for (let level = 1; level < levels; level++) value = { nested: value };
    return value;
  };

  describe('create', () => {
    it('answers 201 with every field, defaults applied and strings trimmed', async () => {
      const response = await post({ name: '  Churn EU  ', model_type: 'churn', base_model: ' gbm-v3 ' });
      expect(response.status).toBe(201);
      const body = (await response.json()) as Model;
      expect(body).toEqual({
        id: expect.any(Number),
        customer: workspace.customerId,
        name: 'Churn EU',
        model_type: 'churn',
        base_model: 'gbm-v3',
        parameters: {},
        status: 'pending',
        metrics: {},
        version: 0,
        created_at: expect.stringMatching(TIMESTAMP),
        updated_at: expect.stringMatching(TIMESTAMP),
      });
      expect(await (await get(`${BASE}${body.id}/`)).json()).toEqual(body);
    });

    it('stores parameters and metrics as given', async () => {
      const parameters = { learning_rate: 0.05, layers: [64, 32], nested: { a: { b: null } } };
      const metrics = {
        auc: 0.91,
        confusion: [
          [1, 2],
          [3, 4],
        ],
      };
      const body = await created({ model_type: 'lookalike', parameters, metrics });
      expect(body).toMatchObject({ model_type: 'lookalike', parameters, metrics });
      expect(await (await get(`${BASE}${body.id}/`)).json()).toEqual(body);
    });

    it('ignores read-only fields in the body', async () => {
      const body = await created({ id: 999999, customer: 424242, version: 17, created_at: '2000-01-01T00:00:00.000Z', updated_at: 'x' });
      expect(body.id).not.toBe(999999);
      expect(body.customer).toBe(workspace.customerId);
      expect(body.version).toBe(0);
      expect(body.created_at).not.toBe('2000-01-01T00:00:00.000Z');
    });

    it.each([
      ['pending', 0],
      ['training', 1],
      ['archived', 0],
    ])('accepts status %s, reachable from pending, with version %i', async (status, version) => {
      expect(await created({ status })).toMatchObject({ status, version });
    });

    it.each(['ready', 'failed'])('refuses status %s, not reachable from pending', async (status) => {
      expect(await errorsOf(await post(valid({ status })))).toEqual({ status: [`Cannot change status from "pending" to "${status}".`] });
    });

    it.each([
      ['missing name', { name: undefined }, { name: ['This field is required.'] }],
      ['blank name', { name: '   ' }, { name: ['This field may not be blank.'] }],
      ['name too long', { name: 'x'.repeat(256) }, { name: ['Ensure this field has no more than 255 characters.'] }],
      ['name of the wrong type', { name: 42 }, { name: ['Not a valid string.'] }],
      ['null name', { name: null }, { name: ['This field may not be null.'] }],
      ['missing model_type', { model_type: undefined }, { model_type: ['This field is required.'] }],
      [
        'wrong model_type',
        { model_type: 'magic' },
        { model_type: ['"magic" is not a valid choice; choose one of "propensity", "lifetime_value", "churn", "lookalike".'] },
      ],
      ['model_type of the wrong type', { model_type: 1 }, { model_type: [expect.stringContaining('is not a valid choice')] }],
      ['null model_type', { model_type: null }, { model_type: ['This field may not be null.'] }],
      ['missing base_model', { base_model: undefined }, { base_model: ['This field is required.'] }],
      ['blank base_model', { base_model: '' }, { base_model: ['This field may not be blank.'] }],
      ['base_model too long', { base_model: 'b'.repeat(101) }, { base_model: ['Ensure this field has no more than 100 characters.'] }],
      ['base_model of the wrong type', { base_model: ['gbm'] }, { base_model: ['Not a valid string.'] }],
      ['null base_model', { base_model: null }, { base_model: ['This field may not be null.'] }],
      ['parameters a list', { parameters: [1, 2] }, { parameters: ['Expected a JSON object.'] }],
      ['parameters a string', { parameters: '{}' }, { parameters: ['Expected a JSON object.'] }],
      ['null parameters', { parameters: null }, { parameters: ['This field may not be null.'] }],
      ['metrics a number', { metrics: 0.9 }, { metrics: ['Expected a JSON object.'] }],
      ['null metrics', { metrics: null }, { metrics: ['This field may not be null.'] }],
      ['wrong status', { status: 'done' }, { status: [expect.stringContaining('is not a valid choice')] }],
      ['status of the wrong type', { status: 0 }, { status: [expect.stringContaining('is not a valid choice')] }],
      ['null status', { status: null }, { status: ['This field may not be null.'] }],
      ['unknown field', { colour: 'blue' }, { colour: ['Unknown field.'] }],
    ])('rejects %s with 400', async (_case, overrides, errors) => {
      expect(await errorsOf(await post(valid(overrides)))).toEqual(errors);
    });

    it('reports every invalid field at once', async () => {
      expect(Object.keys(await errorsOf(await post({ parameters: [] }))).sort()).toEqual([
        'base_model',
        'model_type',
        'name',
        'parameters',
      ]);
    });

    it.each(['parameters', 'metrics'])('limits %s to 10 levels of nesting and 64 KiB', async (field) => {
      expect(await errorsOf(await post(valid({ [field]: nested(11) })))).toEqual({ [field]: ['Nesting is deeper than 10 levels.'] });
      expect((await post(valid({ [field]: nested(10) }))).status).toBe(201);
      expect(await errorsOf(await post(valid({ [field]: { blob: 'x'.repeat(64 * 1024) } })))).toEqual({
        [field]: ['Ensure this object is no larger than 64 KiB as JSON.'],
      });
    });

    it('answers 400 parse_error for malformed JSON and 415 for a form body', async () => {
      const malformed = await api.request(BASE, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{"name":',
      });
      expect(malformed.status).toBe(400);
      expect(await codeOf(malformed)).toBe('parse_error');
      const form = await api.request(BASE, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=x',
      });
      expect(form.status).toBe(415);
    });
  });

  describe('status transitions', () => {
    /** A fresh instance brought to `status` through the API. */
    async function instanceIn(status: string): Promise<Model> {
      if (status === 'pending' || status === 'training' || status === 'archived') return created({ status });
      const training = await created({ status: 'training' });
      return patched(training.id, { status });
    }

    const statuses = ['pending', 'training', 'ready', 'failed', 'archived'];
    const allowed = new Set([
      'pending>training',
      'training>ready',
      'training>failed',
      'ready>training',
      'failed>training',
      'pending>archived',
      'training>archived',
      'ready>archived',
      'failed>archived',
    ]);
    const matrix = statuses.flatMap((from) =>
      statuses.map((to) => [from, to, from === to || allowed.has(`${from}>${to}`) ? 200 : 400] as [string, string, number]),
    );

    it.each(matrix)('%s → %s answers %i', async (from, to, status) => {
      const model = await instanceIn(from);
      const response = await patch(model.id, { status: to });
      expect(response.status).toBe(status);
      const body = (await response.json()) as Model & { errors?: Record<string, string[]> };
      if (status === 200) {
        expect(body.status).toBe(to);
        expect(body.version).toBe(model.version + (to === 'training' && from !== 'training' ? 1 : 0));
      } else {
        expect(Object.keys(body.errors ?? {})).toEqual(['status']);
        expect(((await (await get(`${BASE}${model.id}/`)).json()) as Model).status).toBe(from);
      }
    });

    it('counts a version each time training starts, not while it runs', async () => {
      const model = await created();
      const steps: [Record<string, unknown>, string, number][] = [
        [{ status: 'training' }, 'training', 1],
        [{ status: 'training', metrics: { epoch: 1 } }, 'training', 1],
        [{ status: 'failed' }, 'failed', 1],
        [{ status: 'training' }, 'training', 2],
        [{ status: 'ready', metrics: { auc: 0.9 } }, 'ready', 2],
        [{ status: 'training' }, 'training', 3],
        [{ status: 'ready' }, 'ready', 3],
        [{ name: 'renamed', parameters: { depth: 4 } }, 'ready', 3],
        [{ status: 'archived' }, 'archived', 3],
      ];
      for (const [body, status, version] of steps) expect(await patched(model.id, body)).toMatchObject({ status, version });
      expect(await (await get(`${BASE}${model.id}/`)).json()).toMatchObject({ status: 'archived', version: 3, metrics: { auc: 0.9 } });
    });

    it('keeps an archived instance read-only, but a PATCH that changes nothing is a 200', async () => {
      const model = await created({ parameters: { b: { y: 1, x: [1, 2] }, a: 2 }, metrics: { auc: 0.8 } });
      const archived = await patched(model.id, { status: 'archived' });
      for (const change of [
        { name: 'other' },
        { base_model: 'gbm-v4' },
        { parameters: {} },
        { metrics: { auc: 0.9 } },
        { status: 'training' },
      ]) {
        expect(await errorsOf(await patch(model.id, change))).toEqual({
          status: ['This AI model instance is archived and cannot be changed.'],
        });
      }
      const same = await patched(model.id, {
        name: model.name,
        model_type: 'churn',
        status: 'archived',
        parameters: { a: 2, b: { x: [1, 2], y: 1 } },
        metrics: { auc: 0.8 },
      });
      expect(same).toEqual(archived);
      expect(await patched(model.id, {})).toEqual(archived);
    });
  });

  describe('update', () => {
    it('changes only the fields given and moves updated_at', async () => {
      const model = await created({ parameters: { depth: 3 } });
      const body = await patched(model.id, { base_model: '  gbm-v4 ', model_type: 'propensity' });
      expect(body).toMatchObject({
        name: model.name,
        base_model: 'gbm-v4',
        model_type: 'propensity',
        parameters: { depth: 3 },
        status: 'pending',
      });
      expect(Date.parse(body.updated_at)).toBeGreaterThanOrEqual(Date.parse(model.updated_at));
      expect(body.created_at).toBe(model.created_at);
    });

    it('replaces parameters and metrics as a whole', async () => {
      const model = await created({ parameters: { a: 1, b: 2 } });
      expect((await patched(model.id, { parameters: { c: 3 } })).parameters).toEqual({ c: 3 });
    });

    it('leaves updated_at alone when nothing changes', async () => {
      const model = await created();
      expect(await patched(model.id, { name: model.name, status: 'pending' })).toEqual(model);
    });

    it.each([
      [{ name: null }, { name: ['This field may not be null.'] }],
      [{ name: '' }, { name: ['This field may not be blank.'] }],
      [{ base_model: null }, { base_model: ['This field may not be null.'] }],
      [{ model_type: 'other' }, { model_type: [expect.stringContaining('is not a valid choice')] }],
      [{ parameters: null }, { parameters: ['This field may not be null.'] }],
      [{ metrics: [] }, { metrics: ['Expected a JSON object.'] }],
      [{ bogus: 1 }, { bogus: ['Unknown field.'] }],
    ])('rejects %j with 400', async (body, errors) => {
      const model = await created();
      expect(await errorsOf(await patch(model.id, body))).toEqual(errors);
    });

    it('ignores read-only fields', async () => {
      const model = await created();
      expect(await patched(model.id, { version: 9, id: 1, customer: 424242 })).toEqual(model);
    });

    it.each(['abc', '0', '-1', '99999999999', '1.5', '987654'])('answers id %s with 404', async (id) => {
      expect((await api.request(`${BASE}${id}/`, send('PATCH', { name: 'x' }, auth))).status).toBe(404);
      expect((await get(`${BASE}${id}/`)).status).toBe(404);
      expect((await api.request(`${BASE}${id}/`, send('DELETE', undefined, auth))).status).toBe(404);
    });

    it('serves the path without its trailing slash too', async () => {
      const model = await created();
      expect((await get(`${BASE}${model.id}`)).status).toBe(200);
      expect((await get(BASE.slice(0, -1))).status).toBe(200);
    });
  });

  describe('delete', () => {
    const audienceUsing = async (modelId: number) => {
      const response = await api.request(
        '/api/v1/audiences/',
        send('POST', { name: `Uses ${name()}`, source_type: 'model', model_instance: modelId }, auth),
      );
      expect(response.status).toBe(201);
      return ((await response.json()) as { id: number }).id;
    };
    const signalUsing = async (modelId: number) => {
      const rows: { id: number }[] = await api.dataSource.query(
        `INSERT INTO signals (customer_id, name, signal_type, model_instance_id) VALUES ($1,'s','score',$2) RETURNING id`,
        [workspace.customerId, modelId],
      );
      return rows[0]!.id;
    };

    async function conflictOf(response: Response): Promise<string> {
      expect(response.status).toBe(409);
      const body = (await response.json()) as { code: string; detail: string };
      expect(body.code).toBe('conflict');
      return body.detail;
    }

    it('answers 204 with no body, then 404', async () => {
      const model = await created();
      const response = await remove(model.id);
      expect(response.status).toBe(204);
      expect(await response.text()).toBe('');
      expect((await get(`${BASE}${model.id}/`)).status).toBe(404);
      expect((await remove(model.id)).status).toBe(404);
    });

    it('answers 409 while an audience uses the instance, and 204 once it no longer does', async () => {
      const model = await created({ status: 'training' });
      const audience = await audienceUsing(model.id);
      expect(await conflictOf(await remove(model.id))).toBe(
        'This AI model instance is used by 1 audience(s) and 0 signal(s); remove it from them first.',
      );
      expect((await get(`${BASE}${model.id}/`)).status).toBe(200);
      expect((await api.request(`/api/v1/audiences/${audience}/`, send('DELETE', undefined, auth))).status).toBe(204);
      expect((await remove(model.id)).status).toBe(204);
    });

    it('answers 409 while a signal uses the instance, and 204 once it no longer does', async () => {
      const model = await created();
      const signal = await signalUsing(model.id);
      expect(await conflictOf(await remove(model.id))).toBe(
        'This AI model instance is used by 0 audience(s) and 1 signal(s); remove it from them first.',
      );
      await api.dataSource.query('UPDATE signals SET model_instance_id = NULL WHERE customer_id = $1 AND id = $2', [
        workspace.customerId,
        signal,
      ]);
      expect((await remove(model.id)).status).toBe(204);
    });

    it('names both counts when audiences and signals use the instance, archived or not', async () => {
      const model = await created();
      await audienceUsing(model.id);
      await audienceUsing(model.id);
      await signalUsing(model.id);
      await patched(model.id, { status: 'archived' });
      expect(await conflictOf(await remove(model.id))).toBe(
        'This AI model instance is used by 2 audience(s) and 1 signal(s); remove it from them first.',
      );
    });

    it('deletes an archived instance nobody uses', async () => {
      const model = await created({ status: 'archived' });
      expect((await remove(model.id)).status).toBe(204);
    });
  });

  describe('list', () => {
    let listWorkspace: Workspace;
    let listAuth: Record<string, string>;
    const ids: number[] = [];
    const modelTypes = ['propensity', 'lifetime_value', 'churn', 'lookalike'];
    const statuses = ['pending', 'training', 'archived'];

    beforeAll(async () => {
      listWorkspace = await createWorkspace(api);
      listAuth = bearer((await login(api, await createUser(api, listWorkspace, { role: 'viewer' }))).access);
      const adminAuth = bearer((await login(api, await createUser(api, listWorkspace, { role: 'admin' }))).access);
      for (let index = 0; index < 25; index++) {
        const response = await post(
          {
            name: `List ${String(index).padStart(2, '0')} ${index % 2 ? 'odd' : 'even'}`,
            model_type: modelTypes[index % 4],
            base_model: 'gbm-v3',
            status: statuses[index % 3],
          },
          adminAuth,
        );
        expect(response.status).toBe(201);
        ids.push(((await response.json()) as { id: number }).id);
      }
    });

    interface Row {
      id: number;
      name: string;
      status: string;
      model_type: string;
      created_at: string;
      updated_at: string;
    }

    const list = async (query: string) => {
      const response = await get(`${BASE}${query}`, listAuth);
      return {
        status: response.status,
        body: (await response.json()) as {
          count: number;
          next: string | null;
          previous: string | null;
          results: Row[];
          detail?: string;
          errors?: Record<string, string[]>;
        },
      };
    };

    it('pages newest first with absolute next/previous links', async () => {
      const first = await list('');
      expect(first.status).toBe(200);
      expect(first.body.count).toBe(25);
      expect(first.body.results.map((row) => row.id)).toEqual([...ids].reverse().slice(0, 20));
      expect(first.body.previous).toBeNull();
      expect(first.body.next).toBe(`${api.baseUrl}${BASE}?page=2`);
      const second = await list('?page=2');
      expect(second.body.results.map((row) => row.id)).toEqual([...ids].reverse().slice(20));
      expect(second.body.next).toBeNull();
      expect(second.body.previous).toBe(`${api.baseUrl}${BASE}?page=1`);
    });

    it('pages exactly to the end', async () => {
      const last = await list('?page_size=5&page=5');
      expect(last.body.results).toHaveLength(5);
      expect(last.body.next).toBeNull();
      expect((await list('?page_size=5&page=6')).status).toBe(404);
      expect((await list('?page_size=1')).body.results).toHaveLength(1);
    });

    it('keeps the other query parameters in the links', async () => {
      const { body } = await list('?model_type=churn&page_size=2&search=List');
      expect(body.count).toBe(6);
      expect(Object.fromEntries(new URL(body.next!).searchParams)).toEqual({
        model_type: 'churn',
        page_size: '2',
        search: 'List',
        page: '2',
      });
    });

    it.each([
      ['?page=3', 404],
      ['?page=0', 404],
      ['?page=-1', 404],
      ['?page=abc', 404],
      ['?page_size=0', 400],
      ['?page_size=abc', 400],
      ['?ordering=secret', 400],
      ['?ordering=-model_type', 400],
      ['?status=bogus', 400],
      ['?model_type=bogus', 400],
    ])('answers %s with %i', async (query, status) => {
      const { status: actual, body } = await list(query);
      expect(actual).toBe(status);
      if (status === 404) expect(body.detail).toBe('Invalid page.');
    });

    it('rejects a search longer than 255 characters', async () => {
      expect((await list(`?search=${'s'.repeat(256)}`)).body.errors).toEqual({
        search: ['Ensure this field has no more than 255 characters.'],
      });
    });

    it('names the filter in a wrong-enum error', async () => {
      expect((await list('?status=bogus')).body.errors).toEqual({
        status: ['"bogus" is not a valid choice; choose one of "pending", "training", "ready", "failed", "archived".'],
      });
      expect(Object.keys((await list('?model_type=1')).body.errors ?? {})).toEqual(['model_type']);
      expect(Object.keys((await list('?ordering=nope')).body.errors ?? {})).toEqual(['ordering']);
    });

    it('clamps page_size above 100', async () => {
      const { body } = await list('?page_size=101');
      expect(body.results).toHaveLength(25);
      expect(body.next).toBeNull();
    });

    it('filters by status, model_type and search, and ignores unknown parameters', async () => {
      expect((await list('?status=training')).body.count).toBe(8);
      expect((await list('?status=ready')).body).toMatchObject({ count: 0, results: [] });
      expect((await list('?model_type=propensity')).body.count).toBe(7);
      expect((await list('?model_type=lookalike&status=pending')).body.results.map((row) => row.name)).toEqual([
        'List 15 odd',
        'List 03 odd',
      ]);
      expect((await list('?search=ODD')).body.count).toBe(12);
      expect((await list('?search=list%200')).body.count).toBe(10);
      expect((await list('?search=%25')).body.count).toBe(0);
      expect((await list('?search=_')).body.count).toBe(0);
      expect((await list('?status=&colour=blue')).body.count).toBe(25);
    });

    it('never shows another workspace’s instances', async () => {
      const { body } = await list('?page_size=100');
      expect(body.results.every((row) => ids.includes(row.id))).toBe(true);
      const mine = ((await (await get(BASE)).json()) as { results: Row[] }).results;
      expect(mine.some((row) => ids.includes(row.id))).toBe(false);
    });

    it.each(['id', 'name', 'created_at', 'updated_at', 'status'] as const)('orders by %s both ways', async (field) => {
      const ascending = (await list(`?ordering=${field}&page_size=100`)).body.results;
      const descending = (await list(`?ordering=-${field}&page_size=100`)).body.results;
      expect(ascending).toHaveLength(25);
      const sorted = [...ascending].sort((a, b) => (a[field] < b[field] ? -1 : a[field] > b[field] ? 1 : a.id - b.id));
      expect(ascending.map((row) => row.id)).toEqual(sorted.map((row) => row.id));
      expect(descending.map((row) => row.id)).toEqual([...ascending].reverse().map((row) => row.id));
    });
  });

  describe('tenancy', () => {
    it('answers 404 for another workspace’s instance on GET, PATCH and DELETE, and leaves it alone', async () => {
      const other = await createWorkspace(api);
      const otherAuth = bearer((await login(api, await createUser(api, other, { role: 'admin' }))).access);
      const theirs = (await (await post(valid(), otherAuth)).json()) as Model;
      for (const response of [await get(`${BASE}${theirs.id}/`), await patch(theirs.id, { name: 'mine now' }), await remove(theirs.id)]) {
        expect(response.status).toBe(404);
        expect(await codeOf(response)).toBe('not_found');
      }
      expect(await (await get(`${BASE}${theirs.id}/`, otherAuth)).json()).toEqual(theirs);
    });
  });

  describe('API document', () => {
    it('documents the five operations with stable ids, the filters and the status rules', async () => {
      const document = (await (await api.request('/api/schema/')).json()) as {
        paths: Record<string, Record<string, { operationId: string; parameters?: { name: string }[] }>>;
        components: { schemas: Record<string, { properties: Record<string, { description?: string }> }> };
      };
      const collection = document.paths[BASE]!;
      const item = document.paths[`${BASE}{id}/`]!;
      expect([collection.get, collection.post, item.get, item.patch, item.delete].map((operation) => operation?.operationId)).toEqual([
        'ai_model_instances_list',
        'ai_model_instances_create',
        'ai_model_instances_retrieve',
        'ai_model_instances_partial_update',
        'ai_model_instances_destroy',
      ]);
      expect(collection.get!.parameters!.map((parameter) => parameter.name)).toEqual(
        expect.arrayContaining(['status', 'model_type', 'search', 'page', 'page_size', 'ordering']),
      );
      expect(document.components.schemas.CreateAiModelInstanceDto!.properties.status!.description).toContain(
        '`ready`/`failed` → `training`',
      );
      expect(Object.keys(document.components.schemas.AiModelInstanceDto!.properties)).toEqual([
        'id',
        'customer',
        'name',
        'model_type',
        'base_model',
        'parameters',
        'status',
        'metrics',
        'version',
        'created_at',
        'updated_at',
      ]);
    });
  });

  describe('permissions', () => {
    it('lets a viewer and a read-only key read but not write', async () => {
      const model = await created();
      const viewer = bearer((await login(api, await createUser(api, workspace, { role: 'viewer' }))).access);
      const readKey = { authorization: `Api-Key ${(await createApiKey(api, workspace, { scope: 'read' })).key}` };
      for (const headers of [viewer, readKey]) {
        expect((await get(BASE, headers)).status).toBe(200);
        expect((await get(`${BASE}${model.id}/`, headers)).status).toBe(200);
        for (const response of [
          await post(valid(), headers),
          await patch(model.id, { name: 'x' }, headers),
          await remove(model.id, headers),
        ]) {
          expect(response.status).toBe(403);
          expect(await codeOf(response)).toBe('permission_denied');
        }
      }
      expect(await (await get(`${BASE}${model.id}/`)).json()).toEqual(model);
    });

    it('lets a write-scoped key, as the training pipeline, report status and metrics', async () => {
      const pipeline = { authorization: `Api-Key ${(await createApiKey(api, workspace, { scope: 'write' })).key}` };
      const model = await created();
      expect(await patched(model.id, { status: 'training' }, pipeline)).toMatchObject({ status: 'training', version: 1 });
      const metrics = { auc: 0.93, log_loss: 0.21, per_segment: { eu: 0.91 } };
      expect(await patched(model.id, { status: 'ready', metrics }, pipeline)).toMatchObject({ status: 'ready', metrics, version: 1 });
      expect(await patched(model.id, { metrics: { auc: 0.94 } }, pipeline)).toMatchObject({ metrics: { auc: 0.94 } });
    });

    it('lets an admin write', async () => {
      const admin = bearer((await login(api, await createUser(api, workspace, { role: 'admin' }))).access);
      expect((await post(valid(), admin)).status).toBe(201);
    });

    it('answers 401 without credentials', async () => {
      const response = await api.request(BASE);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBeTruthy();
    });
  });
});
