import {
  bearer,
  createApiKey,
  createConnection,
  createModelInstance,
  createUser,
  createWorkspace,
  login,
  send,
  type Workspace,
} from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const BASE = '/api/v1/audiences/';

describe('audiences (SPEC section 3)', () => {
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

  const get = (path: string) => api.request(path, { headers: auth });
  const post = (body: unknown, headers = auth) => api.request(BASE, send('POST', body, headers));
  const patch = (id: number, body: unknown, headers = auth) => api.request(`${BASE}${id}/`, send('PATCH', body, headers));
  const remove = (id: number, headers = auth) => api.request(`${BASE}${id}/`, send('DELETE', undefined, headers));

  async function created(body: Record<string, unknown>): Promise<Record<string, unknown> & { id: number }> {
    const response = await post(body);
    expect(response.status).toBe(201);
    return (await response.json()) as Record<string, unknown> & { id: number };
  }

  async function errorsOf(response: Response, status = 400): Promise<Record<string, string[]>> {
    expect(response.status).toBe(status);
    const body = (await response.json()) as { code: string; errors: Record<string, string[]> };
    expect(body.code).toBe('validation_error');
    return body.errors;
  }

  let counter = 0;
  const name = () => `Audience ${++counter} ${Date.now()}`;

  describe('create', () => {
    it('answers 201 with every field, defaults applied', async () => {
      const body = await created({ name: `  ${'Trimmed name'}  `, source_type: 'rules' });
      expect(body).toEqual({
        id: expect.any(Number),
        customer: workspace.customerId,
        name: 'Trimmed name',
        description: '',
        source_type: 'rules',
        rules: {},
        model_instance: null,
        min_score: null,
        connections: [],
        status: 'draft',
        size: null,
        members_updated_at: null,
        destinations: [],
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
    });

    it('accepts a model audience with its model, score and destinations', async () => {
      const model = await createModelInstance(api, workspace);
      const connection = await createConnection(api, workspace);
      const body = await created({
        name: name(),
        source_type: 'model',
        model_instance: model.id,
        min_score: 0.75,
        connections: [connection.id],
        rules: { trait: 'plan', op: 'in', value: ['pro', 'team'] },
      });
      expect(body).toMatchObject({
        model_instance: model.id,
        min_score: 0.75,
        connections: [connection.id],
        rules: { trait: 'plan', op: 'in', value: ['pro', 'team'] },
      });
      expect(await (await get(`${BASE}${body.id}/`)).json()).toEqual(body);
    });

    it('ignores read-only fields in the body', async () => {
      const body = await created({
        name: name(),
        source_type: 'upload',
        id: 999999,
        customer: 424242,
        size: 5,
        created_at: '2000-01-01T00:00:00.000Z',
      });
      expect(body.id).not.toBe(999999);
      expect(body.customer).toBe(workspace.customerId);
      expect(body.size).toBeNull();
      expect(body.created_at).not.toBe('2000-01-01T00:00:00.000Z');
    });

    it.each([
      ['missing name', { source_type: 'rules' }, { name: ['This field is required.'] }],
      ['blank name', { name: '   ', source_type: 'rules' }, { name: ['This field may not be blank.'] }],
      ['name too long', { name: 'x'.repeat(256), source_type: 'rules' }, { name: ['Ensure this field has no more than 255 characters.'] }],
      ['name of the wrong type', { name: 42, source_type: 'rules' }, { name: ['Not a valid string.'] }],
      ['null name', { name: null, source_type: 'rules' }, { name: ['This field may not be null.'] }],
      ['missing source_type', { name: 'x' }, { source_type: ['This field is required.'] }],
      ['wrong enum', { name: 'x', source_type: 'magic' }, { source_type: [expect.stringContaining('is not a valid choice')] }],
      [
        'description too long',
        { name: 'x', source_type: 'rules', description: 'd'.repeat(2001) },
        { description: ['Ensure this field has no more than 2000 characters.'] },
      ],
      ['rules not an object', { name: 'x', source_type: 'rules', rules: [1, 2] }, { rules: ['Expected a JSON object.'] }],
      [
        'min_score out of range',
        { name: 'x', source_type: 'model', min_score: 1.5 },
        // Every error at once: the body also lacks the model instance a model audience needs.
        { min_score: ['Ensure this value is between 0 and 1.'], model_instance: ['This field is required when source_type is "model".'] },
      ],
      [
        'min_score a string',
        { name: 'x', source_type: 'model', min_score: '0.5' },
        { min_score: ['A valid number is required.'], model_instance: ['This field is required when source_type is "model".'] },
      ],
      [
        'model_instance not an integer',
        { name: 'x', source_type: 'model', model_instance: 'abc' },
        { model_instance: ['A valid integer is required.'] },
      ],
      ['connections not a list', { name: 'x', source_type: 'rules', connections: 3 }, { connections: ['Expected a list of items.'] }],
      [
        'connections with a string',
        { name: 'x', source_type: 'rules', connections: ['3'] },
        { connections: ['A valid integer is required.'] },
      ],
      ['unknown field', { name: 'x', source_type: 'rules', colour: 'blue' }, { colour: ['Unknown field.'] }],
      ['status archived on create', { name: 'x', source_type: 'rules', status: 'archived' }, undefined],
    ])('rejects %s with 400', async (_case, body, errors) => {
      const response = await post(body);
      if (errors === undefined) {
        expect(response.status).toBe(201);
        return;
      }
      expect(await errorsOf(response)).toEqual(errors);
    });

    it('rejects rules nested deeper than 10 levels and larger than 64 KiB', async () => {
      // Each `not` is one level of nesting, the condition the tenth.
      let deep: Record<string, unknown> = { trait: 'plan', op: 'exists' };
      for (let level = 0; level < 10; level++) deep = { not: deep };
      expect(await errorsOf(await post({ name: name(), source_type: 'rules', rules: deep }))).toEqual({
        rules: ['Nesting is deeper than 10 levels.'],
      });
      let ten: Record<string, unknown> = { trait: 'plan', op: 'exists' };
      for (let level = 0; level < 9; level++) ten = { not: ten };
      expect((await post({ name: name(), source_type: 'rules', rules: ten })).status).toBe(201);
      const big = { trait: 'plan', op: 'eq', value: 'x'.repeat(64 * 1024) };
      expect(await errorsOf(await post({ name: name(), source_type: 'rules', rules: big }))).toEqual({
        rules: ['Ensure this object is no larger than 64 KiB as JSON.'],
      });
    });

    it('requires model_instance for a model audience and refuses min_score for others', async () => {
      expect(await errorsOf(await post({ name: name(), source_type: 'model' }))).toEqual({
        model_instance: ['This field is required when source_type is "model".'],
      });
      expect(await errorsOf(await post({ name: name(), source_type: 'rules', min_score: 0.5 }))).toEqual({
        min_score: ['Only allowed when source_type is "model".'],
      });
    });

    it('reports every field at once: a shape error and a cross-field rule together', async () => {
      expect(await errorsOf(await post({ name: '', source_type: 'model' }))).toEqual({
        name: ['This field may not be blank.'],
        model_instance: ['This field is required when source_type is "model".'],
      });
      expect(await errorsOf(await post({ name: '', source_type: 'rules', min_score: 2 }))).toEqual({
        name: ['This field may not be blank.'],
        min_score: ['Only allowed when source_type is "model".'],
      });
    });

    it('refuses references that do not exist', async () => {
      const errors = await errorsOf(await post({ name: name(), source_type: 'model', model_instance: 987654, connections: [987655] }));
      expect(errors).toEqual({
        model_instance: ['Invalid pk "987654" - object does not exist.'],
        connections: ['Invalid pk "987655" - object does not exist.'],
      });
    });

    it('refuses a duplicate name in another letter case', async () => {
      const first = name();
      await created({ name: first, source_type: 'rules' });
      expect(await errorsOf(await post({ name: first.toUpperCase(), source_type: 'rules' }))).toEqual({
        name: ['An audience with this name already exists.'],
      });
    });

    it('answers 415 for a form body', async () => {
      const response = await api.request(BASE, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=x',
      });
      expect(response.status).toBe(415);
    });
  });

  describe('status transitions', () => {
    it.each([
      ['draft', 'active', 200],
      ['draft', 'archived', 200],
      ['active', 'archived', 200],
      ['active', 'draft', 400],
      ['archived', 'draft', 400],
      ['archived', 'active', 400],
      ['draft', 'draft', 200],
    ])('%s → %s answers %i', async (from, to, status) => {
      const audience = await created({ name: name(), source_type: 'rules' });
      if (from !== 'draft') expect((await patch(audience.id, { status: from })).status).toBe(200);
      const response = await patch(audience.id, { status: to });
      expect(response.status).toBe(status);
      const body = (await response.json()) as { status?: string; errors?: Record<string, string[]> };
      if (status === 200) expect(body.status).toBe(to);
      else expect(Object.keys(body.errors ?? {})).toEqual(['status']);
    });

    it('keeps an archived audience read-only, but a PATCH that changes nothing is a 200', async () => {
      const audience = await created({ name: name(), source_type: 'rules', rules: { op: 'eq', trait: 'plan', value: 'pro' } });
      await patch(audience.id, { status: 'archived' });
      expect(await errorsOf(await patch(audience.id, { description: 'new' }))).toEqual({
        status: ['This audience is archived and cannot be changed.'],
      });
      const same = await patch(audience.id, { name: audience.name, status: 'archived', rules: { trait: 'plan', op: 'eq', value: 'pro' } });
      expect(same.status).toBe(200);
    });
  });

  describe('update', () => {
    it('changes only the fields given and moves updated_at', async () => {
      const audience = await created({ name: name(), source_type: 'rules', description: 'before' });
      const response = await patch(audience.id, { description: 'after' });
      expect(response.status).toBe(200);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ name: audience.name, description: 'after' });
      expect(Date.parse(body.updated_at as string)).toBeGreaterThanOrEqual(Date.parse(audience.updated_at as string));
    });

    it('validates the merged state and a null for a required field', async () => {
      const audience = await created({ name: name(), source_type: 'rules' });
      expect(await errorsOf(await patch(audience.id, { source_type: 'model' }))).toEqual({
        model_instance: ['This field is required when source_type is "model".'],
      });
      expect(await errorsOf(await patch(audience.id, { name: null }))).toEqual({ name: ['This field may not be null.'] });
      expect(await errorsOf(await patch(audience.id, { bogus: 1 }))).toEqual({ bogus: ['Unknown field.'] });
    });

    it('replaces the destinations', async () => {
      const [a, b] = [await createConnection(api, workspace), await createConnection(api, workspace)];
      const audience = await created({ name: name(), source_type: 'rules', connections: [a.id] });
      const body = (await (await patch(audience.id, { connections: [b.id, a.id] })).json()) as { connections: number[] };
      expect(body.connections).toEqual([a.id, b.id].sort((x, y) => x - y));
      expect(((await (await patch(audience.id, { connections: [] })).json()) as { connections: number[] }).connections).toEqual([]);
    });

    it('refuses a duplicate name in another letter case, but keeps its own name', async () => {
      const first = await created({ name: name(), source_type: 'rules' });
      const second = await created({ name: name(), source_type: 'rules' });
      expect(await errorsOf(await patch(second.id, { name: (first.name as string).toLowerCase() }))).toEqual({
        name: ['An audience with this name already exists.'],
      });
      expect((await patch(first.id, { name: (first.name as string).toUpperCase() })).status).toBe(200);
    });

    it.each(['abc', '0', '-1', '99999999999', '1.5'])('answers a bad id %s with 404', async (id) => {
      expect((await api.request(`${BASE}${id}/`, send('PATCH', { description: 'x' }, auth))).status).toBe(404);
      expect((await get(`${BASE}${id}/`)).status).toBe(404);
    });

    it('answers another spelling of an existing id (hex, exponent, sign, leading zero, padding) with 404', async () => {
      const audience = await created({ name: name(), source_type: 'rules' });
      const id = Number(audience.id);
      expect((await get(`${BASE}${id}/`)).status).toBe(200);
      for (const spelling of [`0x${id.toString(16)}`, `${id}e0`, `+${id}`, `0${id}`, `${id}.0`, `%20${id}`, `${id}%20`]) {
        expect({ spelling, status: (await get(`${BASE}${spelling}/`)).status }).toEqual({ spelling, status: 404 });
      }
    });
  });

  describe('delete', () => {
    it('answers 204 with no body, then 404', async () => {
      const audience = await created({ name: name(), source_type: 'rules', connections: [(await createConnection(api, workspace)).id] });
      const response = await remove(audience.id);
      expect(response.status).toBe(204);
      expect(await response.text()).toBe('');
      expect((await get(`${BASE}${audience.id}/`)).status).toBe(404);
      expect((await remove(audience.id)).status).toBe(404);
    });

    it('answers 409 while a signal uses the audience', async () => {
      const audience = await created({ name: name(), source_type: 'rules' });
      await api.dataSource.query(
        `INSERT INTO signals (customer_id, name, signal_type, audience_id) VALUES ($1, 'uses audience', 'score', $2)`,
        [workspace.customerId, audience.id],
      );
      const response = await remove(audience.id);
      expect(response.status).toBe(409);
      expect(((await response.json()) as { code: string }).code).toBe('conflict');
    });
  });

  describe('list', () => {
    let listWorkspace: Workspace;
    let listAuth: Record<string, string>;
    const ids: number[] = [];

    beforeAll(async () => {
      listWorkspace = await createWorkspace(api);
      listAuth = bearer((await login(api, await createUser(api, listWorkspace, { role: 'viewer' }))).access);
      const editorAuth = bearer((await login(api, await createUser(api, listWorkspace, { role: 'admin' }))).access);
      for (let index = 0; index < 25; index++) {
        const response = await api.request(
          BASE,
          send(
            'POST',
            {
              name: `List ${String(index).padStart(2, '0')} ${index % 2 ? 'odd' : 'even'}`,
              source_type: index % 5 === 0 ? 'upload' : 'rules',
              status: index % 3 === 0 ? 'active' : 'draft',
            },
            editorAuth,
          ),
        );
        ids.push(((await response.json()) as { id: number }).id);
      }
    });

    const list = async (query: string) => {
      const response = await api.request(`${BASE}${query}`, { headers: listAuth });
      return {
        status: response.status,
        body: (await response.json()) as {
          count: number;
          next: string | null;
          previous: string | null;
          results: { id: number; name: string; status: string; source_type: string }[];
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
      expect(second.body.results).toHaveLength(5);
      expect(second.body.next).toBeNull();
      expect(second.body.previous).toBe(`${api.baseUrl}${BASE}?page=1`);
    });

    it('keeps the other query parameters in the links', async () => {
      const { body } = await list('?status=draft&page_size=5&search=List');
      expect(body.count).toBe(16);
      const next = new URL(body.next!);
      expect(Object.fromEntries(next.searchParams)).toEqual({ status: 'draft', page_size: '5', search: 'List', page: '2' });
    });

    it.each([
      ['?page=3', 404],
      ['?page=0', 404],
      ['?page=abc', 404],
      ['?page_size=0', 400],
      ['?page_size=abc', 400],
      ['?ordering=secret', 400],
      ['?status=bogus', 400],
      ['?source_type=bogus', 400],
      ['?customer=abc', 400],
      ['?model_instance=abc', 400],
    ])('answers %s with %i', async (query, status) => {
      const { status: actual, body } = await list(query);
      expect(actual).toBe(status);
      if (status === 404) expect(body.detail).toBe('Invalid page.');
    });

    it('clamps page_size above 100', async () => {
      const { body } = await list('?page_size=101');
      expect(body.results).toHaveLength(25);
      expect(body.next).toBeNull();
    });

    it('filters by status, source_type, search and customer', async () => {
      expect((await list('?status=active')).body.count).toBe(9);
      expect((await list('?source_type=upload')).body.count).toBe(5);
      expect((await list('?search=ODD')).body.count).toBe(12);
      expect((await list('?search=%25')).body.count).toBe(0);
      expect((await list(`?customer=${listWorkspace.customerId}`)).body.count).toBe(25);
      expect((await list(`?customer=${workspace.customerId}`)).body).toMatchObject({ count: 0, results: [] });
    });

    it('filters by model_instance: the audiences that keep a model from being deleted', async () => {
      const scored = await createModelInstance(api, workspace);
      const other = await createModelInstance(api, workspace);
      const first = await created({ name: name(), source_type: 'model', model_instance: scored.id });
      const second = await created({ name: name(), source_type: 'model', model_instance: scored.id, min_score: 0.5 });
      await created({ name: name(), source_type: 'model', model_instance: other.id });
      const response = await get(`${BASE}?model_instance=${scored.id}`);
      const body = (await response.json()) as { count: number; results: { id: number }[] };
      expect(body.count).toBe(2);
      expect(body.results.map((row) => row.id)).toEqual([second.id, first.id]);
      expect((await list(`?model_instance=${scored.id}`)).body).toMatchObject({ count: 0, results: [] });
    });

    it.each(['id', 'name', 'created_at', 'updated_at', 'status'])('orders by %s both ways', async (field) => {
      const ascending = (await list(`?ordering=${field}&page_size=100`)).body.results;
      const descending = (await list(`?ordering=-${field}&page_size=100`)).body.results;
      expect(ascending).toHaveLength(25);
      const key = (row: { id: number; name: string; status: string }) =>
        field === 'name' ? row.name : field === 'status' ? row.status : row.id;
      const sorted = [...ascending].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id - b.id));
      expect(ascending.map((row) => row.id)).toEqual(sorted.map((row) => row.id));
      expect(descending.map((row) => row.id)).toEqual([...ascending].reverse().map((row) => row.id));
    });
  });

  describe('permissions', () => {
    it('lets a viewer and a read-only key read but not write', async () => {
      const audience = await created({ name: name(), source_type: 'rules' });
      const viewer = bearer((await login(api, await createUser(api, workspace, { role: 'viewer' }))).access);
      const readKey = { authorization: `Api-Key ${(await createApiKey(api, workspace, { scope: 'read' })).key}` };
      for (const headers of [viewer, readKey]) {
        expect((await api.request(BASE, { headers })).status).toBe(200);
        expect((await api.request(`${BASE}${audience.id}/`, { headers })).status).toBe(200);
        for (const response of [
          await post({ name: name(), source_type: 'rules' }, headers),
          await patch(audience.id, { description: 'x' }, headers),
          await remove(audience.id, headers),
        ]) {
          expect(response.status).toBe(403);
          expect(((await response.json()) as { code: string }).code).toBe('permission_denied');
        }
      }
    });

    it('lets a write key and an admin write', async () => {
      const writeKey = { authorization: `Api-Key ${(await createApiKey(api, workspace, { scope: 'write' })).key}` };
      const admin = bearer((await login(api, await createUser(api, workspace, { role: 'admin' }))).access);
      for (const headers of [writeKey, admin]) expect((await post({ name: name(), source_type: 'rules' }, headers)).status).toBe(201);
    });
  });
});
