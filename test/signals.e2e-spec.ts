import {
  apiKeyHeader,
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

const BASE = '/api/v1/signals/';
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const STATUSES = [0, 1, 2, 3, 4] as const;
type Status = (typeof STATUSES)[number];

/** SPEC section 3: the transitions the API allows, besides staying put. */
const ALLOWED_TRANSITIONS = new Set(['0>1', '1>2', '2>1', '3>1', '0>4', '1>4', '2>4', '3>4']);

const NEEDS_ACTIVE_CONNECTION = 'A signal needs an active connection to be activated.';
const ARCHIVED = 'This signal is archived and cannot be changed.';
const missing = (id: number) => `Invalid pk "${id}" - object does not exist.`;

interface SignalBody {
  id: number;
  customer: number;
  name: string;
  description: string;
  signal_type: string;
  status: number;
  model_instance: number | null;
  audience: number | null;
  connection: number | null;
  config: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

interface Problem {
  code: string;
  detail: string;
  errors?: Record<string, string[]>;
}

/** The settings a signal on a Google connection needs to be active (SPEC 10.4). */
const GOOGLE_CONFIG = { conversion_action_id: '123456789' };

describe('signals (SPEC section 3)', () => {
  let api: TestApp;
  let workspace: Workspace;
  let auth: Record<string, string>;
  let activeConnection: number;

  /** Another workspace and its objects: none of them may be visible or usable from `workspace`. */
  const other = { connection: 0, model: 0, audience: 0, signal: 0, auth: {} as Record<string, string> };

  beforeAll(async () => {
    api = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    workspace = await createWorkspace(api);
    auth = bearer((await login(api, await createUser(api, workspace, { role: 'editor' }))).access);
    activeConnection = (await createConnection(api, workspace)).id;

    const otherWorkspace = await createWorkspace(api);
    other.auth = bearer((await login(api, await createUser(api, otherWorkspace, { role: 'editor' }))).access);
    other.connection = (await createConnection(api, otherWorkspace)).id;
    other.model = (await createModelInstance(api, otherWorkspace)).id;
    other.audience = await createAudience(other.auth);
    const response = await api.request(
      BASE,
      send('POST', { name: 'Theirs', signal_type: 'score', connection: other.connection, status: 1, config: GOOGLE_CONFIG }, other.auth),
    );
    expect(response.status).toBe(201);
    other.signal = ((await response.json()) as SignalBody).id;
  });
  afterAll(() => api.close());

  const get = (path: string, headers = auth) => api.request(path, { headers });
  const post = (body: unknown, headers = auth) => api.request(BASE, send('POST', body, headers));
  const patch = (id: number | string, body: unknown, headers = auth) => api.request(`${BASE}${id}/`, send('PATCH', body, headers));
  const remove = (id: number | string, headers = auth) => api.request(`${BASE}${id}/`, send('DELETE', undefined, headers));

  let counter = 0;
  const name = () => `Signal ${++counter} ${Date.now()}`;

  async function createAudience(headers: Record<string, string>): Promise<number> {
    const response = await api.request(
      '/api/v1/audiences/',
      send('POST', { name: `Audience ${++counter} ${Date.now()}`, source_type: 'rules' }, headers),
    );
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: number }).id;
  }

  async function ok(response: Response, status = 200): Promise<SignalBody> {
    const body = (await response.json()) as SignalBody;
    expect({ status: response.status, body }).toEqual({ status, body: expect.anything() });
    return body;
  }

  async function created(body: Record<string, unknown>, headers = auth): Promise<SignalBody> {
    // A Google connection's signal needs its conversion action once active (SPEC 10.4).
    const config = body.connection === undefined || body.connection === null ? {} : { config: GOOGLE_CONFIG };
    return ok(await post({ name: name(), signal_type: 'conversion', ...config, ...body }, headers), 201);
  }

  async function errorsOf(response: Response): Promise<Record<string, string[]>> {
    const body = (await response.json()) as Problem;
    expect({ status: response.status, code: body.code }).toEqual({ status: 400, code: 'validation_error' });
    return body.errors ?? {};
  }

  async function setStatusInDatabase(id: number, status: Status): Promise<void> {
    await api.dataSource.query('UPDATE signals SET status = $1 WHERE customer_id = $2 AND id = $3', [status, workspace.customerId, id]);
  }

  async function setConnectionStatus(id: number, status: 'active' | 'expired' | 'revoked' | 'error'): Promise<void> {
    await api.dataSource.query('UPDATE connections SET status = $1 WHERE customer_id = $2 AND id = $3', [status, workspace.customerId, id]);
  }

  /**
   * A signal in the given state, with an active connection. 2 is reached through the API (1 → 2);
   * 3 (failed) is set by the delivery pipeline, never through the API, so it is written with SQL.
   */
  async function signalIn(status: Status, body: Record<string, unknown> = {}): Promise<SignalBody> {
    const initial = status === 0 || status === 4 ? status : 1;
    const signal = await created({ connection: activeConnection, status: initial, ...body });
    if (status === 2) return ok(await patch(signal.id, { status: 2 }));
    if (status === 3) {
      await setStatusInDatabase(signal.id, 3);
      return ok(await get(`${BASE}${signal.id}/`));
    }
    return signal;
  }

  describe('create', () => {
    it('answers 201 with every field, defaults applied, and the same object on GET', async () => {
      const body = await ok(await post({ name: '  Trimmed name  ', signal_type: 'conversion' }), 201);
      expect(body).toEqual({
        id: expect.any(Number),
        customer: workspace.customerId,
        name: 'Trimmed name',
        description: '',
        signal_type: 'conversion',
        status: 0,
        model_instance: null,
        audience: null,
        connection: null,
        config: {},
        status_reason: null,
        delivery: { received: 0, delivered: 0, failed: 0, pending: 0, last_delivered_at: null, last_error: null },
        created_at: expect.stringMatching(TIMESTAMP),
        updated_at: expect.stringMatching(TIMESTAMP),
      });
      expect(await ok(await get(`${BASE}${body.id}/`))).toEqual(body);
    });

    it('stores every field given', async () => {
      const model = (await createModelInstance(api, workspace)).id;
      const audience = await createAudience(auth);
      const input = {
        name: name(),
        description: 'Offline purchases, sent hourly.',
        signal_type: 'value',
        status: 1,
        model_instance: model,
        audience,
        connection: activeConnection,
        config: { conversion_action_id: '8123' },
      };
      const body = await ok(await post(input), 201);
      expect(body).toMatchObject(input);
      expect(await ok(await get(`${BASE}${body.id}/`))).toEqual(body);
    });

    it('ignores read-only fields in the body', async () => {
      const body = await created({ id: 999999, customer: 424242, created_at: '2000-01-01T00:00:00.000Z', updated_at: '2000-01-01' });
      expect(body.id).not.toBe(999999);
      expect(body.customer).toBe(workspace.customerId);
      expect(body.created_at).not.toBe('2000-01-01T00:00:00.000Z');
      expect(body.updated_at).toMatch(TIMESTAMP);
    });

    it('accepts the longest name and description', async () => {
      const body = await created({ name: 'n'.repeat(255), description: 'd'.repeat(2000) });
      expect(body.name).toHaveLength(255);
      expect(body.description).toHaveLength(2000);
    });

    const valid = { name: 'Valid', signal_type: 'conversion' };
    it.each([
      ['an empty body', {}, { name: ['This field is required.'], signal_type: ['This field is required.'] }],
      ['a missing name', { signal_type: 'score' }, { name: ['This field is required.'] }],
      ['a blank name', { ...valid, name: '   ' }, { name: ['This field may not be blank.'] }],
      ['an empty name', { ...valid, name: '' }, { name: ['This field may not be blank.'] }],
      ['a name too long', { ...valid, name: 'x'.repeat(256) }, { name: ['Ensure this field has no more than 255 characters.'] }],
      ['a name of the wrong type', { ...valid, name: 42 }, { name: ['Not a valid string.'] }],
      ['a null name', { ...valid, name: null }, { name: ['This field may not be null.'] }],
      [
        'a description too long',
        { ...valid, description: 'd'.repeat(2001) },
        { description: ['Ensure this field has no more than 2000 characters.'] },
      ],
      ['a description of the wrong type', { ...valid, description: ['a'] }, { description: ['Not a valid string.'] }],
      ['a null description', { ...valid, description: null }, { description: ['This field may not be null.'] }],
      ['a missing signal_type', { name: 'x' }, { signal_type: ['This field is required.'] }],
      [
        'an unknown signal_type',
        { ...valid, signal_type: 'click' },
        { signal_type: ['"click" is not a valid choice; choose one of "conversion", "value", "score".'] },
      ],
      [
        'a signal_type of the wrong type',
        { ...valid, signal_type: 1 },
        { signal_type: ['"1" is not a valid choice; choose one of "conversion", "value", "score".'] },
      ],
      ['a null signal_type', { ...valid, signal_type: null }, { signal_type: ['This field may not be null.'] }],
      ['status as a string', { ...valid, status: '1' }, { status: ['"1" is not a valid choice; choose one of 0, 1, 2, 3, 4.'] }],
      ['an unknown status', { ...valid, status: 9 }, { status: ['"9" is not a valid choice; choose one of 0, 1, 2, 3, 4.'] }],
      ['a negative status', { ...valid, status: -1 }, { status: ['"-1" is not a valid choice; choose one of 0, 1, 2, 3, 4.'] }],
      ['a fractional status', { ...valid, status: 1.5 }, { status: ['"1.5" is not a valid choice; choose one of 0, 1, 2, 3, 4.'] }],
      ['a status name', { ...valid, status: 'draft' }, { status: ['"draft" is not a valid choice; choose one of 0, 1, 2, 3, 4.'] }],
      ['a null status', { ...valid, status: null }, { status: ['This field may not be null.'] }],
      ['a model_instance string', { ...valid, model_instance: 'abc' }, { model_instance: ['A valid integer is required.'] }],
      ['a model_instance numeric string', { ...valid, model_instance: '3' }, { model_instance: ['A valid integer is required.'] }],
      ['a model_instance of 0', { ...valid, model_instance: 0 }, { model_instance: ['A valid integer is required.'] }],
      ['a fractional audience', { ...valid, audience: 1.5 }, { audience: ['A valid integer is required.'] }],
      ['a boolean audience', { ...valid, audience: true }, { audience: ['A valid integer is required.'] }],
      ['a negative connection', { ...valid, connection: -1 }, { connection: ['A valid integer is required.'] }],
      ['an object as connection', { ...valid, connection: { id: 1 } }, { connection: ['A valid integer is required.'] }],
      ['a connection past 2^53', { ...valid, connection: 2 ** 53 }, { connection: ['A valid integer is required.'] }],
      ['config as a list', { ...valid, config: [1, 2] }, { config: ['Expected a JSON object.'] }],
      ['config as a string', { ...valid, config: '{}' }, { config: ['Expected a JSON object.'] }],
      ['a null config', { ...valid, config: null }, { config: ['This field may not be null.'] }],
      ['an unknown field', { ...valid, colour: 'blue' }, { colour: ['Unknown field.'] }],
    ])('rejects %s with 400', async (_case, body, errors) => {
      expect(await errorsOf(await post(body))).toEqual(errors);
    });

    it('rejects config nested deeper than 10 levels, and accepts 10', async () => {
      const nest = (levels: number) => {
        let value: Record<string, unknown> = { leaf: true };
        for (let level = 1; level < levels; level++) value = { nested: value };
        return value;
      };
      expect((await post({ ...valid, name: name(), config: nest(10) })).status).toBe(201);
      expect(await errorsOf(await post({ ...valid, config: nest(11) }))).toEqual({ config: ['Nesting is deeper than 10 levels.'] });
    });

    it('rejects config larger than 64 KiB, and accepts one just under', async () => {
      const under = { blob: 'x'.repeat(64 * 1024 - 20) };
      expect((await post({ ...valid, name: name(), config: under })).status).toBe(201);
      expect(await errorsOf(await post({ ...valid, config: { blob: 'x'.repeat(64 * 1024) } }))).toEqual({
        config: ['Ensure this object is no larger than 64 KiB as JSON.'],
      });
    });

    it('answers 415 for a form body and 400 parse_error for malformed JSON', async () => {
      const form = await api.request(BASE, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=x',
      });
      expect(form.status).toBe(415);
      const malformed = await api.request(BASE, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{"name":',
      });
      expect(malformed.status).toBe(400);
      expect(((await malformed.json()) as Problem).code).toBe('parse_error');
    });

    it('replays a create retried with the same Idempotency-Key instead of creating again', async () => {
      const body = { name: name(), signal_type: 'value' };
      const headers = { ...auth, 'idempotency-key': `signal-${Date.now()}` };
      const first = await ok(await post(body, headers), 201);
      expect(await ok(await post(body, headers), 201)).toEqual(first);
      const { count } = (await (await get(`${BASE}?search=${encodeURIComponent(body.name)}`)).json()) as { count: number };
      expect(count).toBe(1);
    });

    it('serves the path without its trailing slash too', async () => {
      const signal = await created({});
      expect((await api.request('/api/v1/signals', send('POST', { ...valid, name: name() }, auth))).status).toBe(201);
      expect((await get('/api/v1/signals')).status).toBe(200);
      expect((await get(`/api/v1/signals/${signal.id}`)).status).toBe(200);
    });
  });

  describe('references', () => {
    it('accepts objects of the workspace and clears them with null', async () => {
      const model = (await createModelInstance(api, workspace)).id;
      const audience = await createAudience(auth);
      const signal = await created({ model_instance: model, audience, connection: activeConnection });
      expect(signal).toMatchObject({ model_instance: model, audience, connection: activeConnection });
      const cleared = await ok(await patch(signal.id, { model_instance: null, audience: null, connection: null }));
      expect(cleared).toMatchObject({ model_instance: null, audience: null, connection: null });
    });

    it('refuses ids that do not exist, on create and on update', async () => {
      const body = { model_instance: 987654, audience: 987655, connection: 987656 };
      const expected = { model_instance: [missing(987654)], audience: [missing(987655)], connection: [missing(987656)] };
      expect(await errorsOf(await post({ name: name(), signal_type: 'score', ...body }))).toEqual(expected);
      const signal = await created({});
      expect(await errorsOf(await patch(signal.id, body))).toEqual(expected);
    });

    it("answers another workspace's objects exactly like ids that do not exist", async () => {
      const body = { model_instance: other.model, audience: other.audience, connection: other.connection };
      const expected = {
        model_instance: [missing(other.model)],
        audience: [missing(other.audience)],
        connection: [missing(other.connection)],
      };
      expect(await errorsOf(await post({ name: name(), signal_type: 'score', ...body }))).toEqual(expected);
      const signal = await created({});
      expect(await errorsOf(await patch(signal.id, body))).toEqual(expected);
      for (const [field, id] of Object.entries(body)) {
        expect(await errorsOf(await patch(signal.id, { [field]: id }))).toEqual({ [field]: [missing(id)] });
      }
      expect(await ok(await get(`${BASE}${signal.id}/`))).toMatchObject({ model_instance: null, audience: null, connection: null });
    });
  });

  describe('status on create', () => {
    it.each([0, 1, 4] as const)('accepts status %i (a transition from draft)', async (status) => {
      const signal = await created({ status, connection: activeConnection });
      expect(signal.status).toBe(status);
    });

    it.each([
      [2, 'A signal cannot be created with status 2 (paused); choose one of 0 (draft), 1 (active), 4 (archived).'],
      [3, 'A signal cannot be created with status 3 (failed); choose one of 0 (draft), 1 (active), 4 (archived).'],
    ])('refuses status %i', async (status, message) => {
      expect(
        await errorsOf(await post({ name: name(), signal_type: 'value', status, connection: activeConnection, config: GOOGLE_CONFIG })),
      ).toEqual({
        status: [message],
      });
    });

    it('refuses an active signal without a connection', async () => {
      expect(await errorsOf(await post({ name: name(), signal_type: 'value', status: 1 }))).toEqual({ status: [NEEDS_ACTIVE_CONNECTION] });
    });

    it.each(['expired', 'revoked', 'error'] as const)('refuses an active signal on a connection that is %s', async (status) => {
      const connection = (await createConnection(api, workspace, { status })).id;
      expect(await errorsOf(await post({ name: name(), signal_type: 'value', status: 1, connection, config: GOOGLE_CONFIG }))).toEqual({
        status: [`A signal needs an active connection to be activated; this connection is "${status}".`],
      });
    });

    it("answers an active signal on another workspace's connection like one on a missing connection", async () => {
      for (const connection of [other.connection, 987657]) {
        expect(await errorsOf(await post({ name: name(), signal_type: 'value', status: 1, connection }))).toEqual({
          connection: [missing(connection)],
          status: [NEEDS_ACTIVE_CONNECTION],
        });
      }
    });
  });

  describe('status transitions', () => {
    const pairs = STATUSES.flatMap((from) => STATUSES.map((to) => [from, to] as [Status, Status]));

    it.each(pairs)('%i → %i', async (from, to) => {
      const signal = await signalIn(from);
      expect(signal.status).toBe(from);
      const response = await patch(signal.id, { status: to });
      if (from === to || ALLOWED_TRANSITIONS.has(`${from}>${to}`)) {
        expect((await ok(response)).status).toBe(to);
      } else {
        const errors = await errorsOf(response);
        expect(Object.keys(errors)).toEqual(['status']);
        expect(errors.status).toEqual([
          from === 4
            ? ARCHIVED
            : expect.stringMatching(new RegExp(`^Cannot change status from ${from} \\(\\w+\\) to ${to} \\(\\w+\\)\\.$`)),
        ]);
        expect((await ok(await get(`${BASE}${signal.id}/`))).status).toBe(from);
      }
    });

    it('refuses to activate a draft without a connection', async () => {
      const signal = await created({});
      expect(await errorsOf(await patch(signal.id, { status: 1 }))).toEqual({ status: [NEEDS_ACTIVE_CONNECTION] });
    });

    it('activates with the connection given in the same PATCH', async () => {
      const signal = await created({});
      expect(await ok(await patch(signal.id, { status: 1, connection: activeConnection, config: GOOGLE_CONFIG }))).toMatchObject({
        status: 1,
        connection: activeConnection,
      });
    });

    it('refuses to activate while the same PATCH removes the connection', async () => {
      const signal = await created({ connection: activeConnection });
      expect(await errorsOf(await patch(signal.id, { status: 1, connection: null }))).toEqual({ status: [NEEDS_ACTIVE_CONNECTION] });
    });

    it.each(['expired', 'revoked', 'error'] as const)('refuses to activate with a connection that is %s', async (status) => {
      const signal = await created({ connection: (await createConnection(api, workspace, { status })).id });
      expect(await errorsOf(await patch(signal.id, { status: 1 }))).toEqual({
        status: [`A signal needs an active connection to be activated; this connection is "${status}".`],
      });
    });

    it.each([2, 3] as const)('refuses to reactivate %i once its connection has expired', async (from) => {
      const connection = (await createConnection(api, workspace)).id;
      const signal = await signalIn(from, { connection });
      await setConnectionStatus(connection, 'expired');
      expect(await errorsOf(await patch(signal.id, { status: 1 }))).toEqual({
        status: ['A signal needs an active connection to be activated; this connection is "expired".'],
      });
      await setConnectionStatus(connection, 'active');
      expect((await ok(await patch(signal.id, { status: 1 }))).status).toBe(1);
    });

    it("answers activation with another workspace's connection like a missing one", async () => {
      const signal = await created({});
      for (const connection of [other.connection, 987658]) {
        expect(await errorsOf(await patch(signal.id, { status: 1, connection }))).toEqual({
          connection: [missing(connection)],
          status: [NEEDS_ACTIVE_CONNECTION],
        });
      }
    });

    it('keeps an active signal on an active connection', async () => {
      const signal = await signalIn(1);
      expect(await errorsOf(await patch(signal.id, { connection: null }))).toEqual({
        connection: ['An active signal needs an active connection; pause the signal before removing or replacing it.'],
      });
      const expired = (await createConnection(api, workspace, { status: 'expired' })).id;
      expect(Object.keys(await errorsOf(await patch(signal.id, { connection: expired })))).toEqual(['connection']);
      const another = (await createConnection(api, workspace)).id;
      expect(await ok(await patch(signal.id, { connection: another }))).toMatchObject({ status: 1, connection: another });
      expect(await ok(await patch(signal.id, { status: 2, connection: null }))).toMatchObject({ status: 2, connection: null });
    });

    it('still lets an active signal whose connection has since expired be edited', async () => {
      const connection = (await createConnection(api, workspace)).id;
      const signal = await signalIn(1, { connection });
      await setConnectionStatus(connection, 'expired');
      expect(await ok(await patch(signal.id, { description: 'edited' }))).toMatchObject({ status: 1, description: 'edited' });
    });
  });

  describe('archived signals', () => {
    it('refuses any change with 400 under status', async () => {
      const signal = await signalIn(4, { connection: null, config: { b: 1, a: { d: 2, c: 3 } } });
      for (const change of [
        { description: 'new' },
        { name: 'renamed' },
        { signal_type: 'score' },
        { config: {} },
        { connection: activeConnection },
        { status: 1 },
        { status: 0 },
      ]) {
        expect(await errorsOf(await patch(signal.id, change))).toEqual({ status: [ARCHIVED] });
      }
      expect(await ok(await get(`${BASE}${signal.id}/`))).toEqual(signal);
    });

    it('answers 200 to a PATCH that changes nothing, without touching updated_at', async () => {
      const signal = await signalIn(4, { connection: null, config: { b: 1, a: { d: 2, c: 3 } } });
      for (const same of [
        {},
        { status: 4 },
        { name: ` ${signal.name} `, config: { a: { c: 3, d: 2 }, b: 1 }, connection: signal.connection, audience: null, id: 1 },
      ]) {
        expect(await ok(await patch(signal.id, same))).toEqual(signal);
      }
    });

    it('can be deleted', async () => {
      const signal = await signalIn(4);
      expect((await remove(signal.id)).status).toBe(204);
    });
  });

  describe('update', () => {
    it('changes only the fields given and moves updated_at', async () => {
      const signal = await created({ description: 'before', config: { a: 1 } });
      const body = await ok(await patch(signal.id, { description: 'after', signal_type: 'score' }));
      expect(body).toEqual({ ...signal, description: 'after', signal_type: 'score', updated_at: expect.stringMatching(TIMESTAMP) });
      expect(Date.parse(body.updated_at)).toBeGreaterThanOrEqual(Date.parse(signal.updated_at));
      expect(await ok(await get(`${BASE}${signal.id}/`))).toEqual(body);
    });

    it('replaces config as a whole', async () => {
      const signal = await created({ config: { a: 1, b: 2 } });
      expect((await ok(await patch(signal.id, { config: { c: 3 } }))).config).toEqual({ c: 3 });
    });

    it.each([
      ['name', null, 'This field may not be null.'],
      ['name', '  ', 'This field may not be blank.'],
      ['description', null, 'This field may not be null.'],
      ['signal_type', null, 'This field may not be null.'],
      ['status', null, 'This field may not be null.'],
      ['status', '2', '"2" is not a valid choice; choose one of 0, 1, 2, 3, 4.'],
      ['config', null, 'This field may not be null.'],
      ['connection', 'abc', 'A valid integer is required.'],
      ['bogus', 1, 'Unknown field.'],
    ])('rejects %s = %p', async (field, value, message) => {
      const signal = await created({});
      expect(await errorsOf(await patch(signal.id, { [field]: value }))).toEqual({ [field]: [message] });
    });

    it.each(['abc', '0', '-1', '99999999999', '1.5', '987654321'])('answers a bad or unknown id %s with 404', async (id) => {
      for (const response of [await get(`${BASE}${id}/`), await patch(id, { description: 'x' }), await remove(id)]) {
        expect(response.status).toBe(404);
        expect(((await response.json()) as Problem).code).toBe('not_found');
      }
    });
  });

  describe('delete', () => {
    it('answers 204 with no body, then 404', async () => {
      const signal = await signalIn(1);
      const response = await remove(signal.id);
      expect(response.status).toBe(204);
      expect(await response.text()).toBe('');
      expect((await get(`${BASE}${signal.id}/`)).status).toBe(404);
      expect((await remove(signal.id)).status).toBe(404);
    });
  });

  describe("another workspace's signal", () => {
    it('is a 404 on GET, PATCH and DELETE, exactly like a missing one, and stays untouched', async () => {
      const answers: unknown[] = [];
      for (const id of [other.signal, 987659]) {
        for (const response of [await get(`${BASE}${id}/`), await patch(id, { name: 'mine now' }), await remove(id)]) {
          const body = (await response.json()) as Problem;
          answers.push({ status: response.status, code: body.code, detail: body.detail, errors: body.errors });
        }
      }
      expect(answers).toEqual(Array(6).fill({ status: 404, code: 'not_found', detail: 'Not found.', errors: undefined }));
      expect(await ok(await get(`${BASE}${other.signal}/`, other.auth))).toMatchObject({ name: 'Theirs', status: 1 });
    });

    it('never appears in a list', async () => {
      for (const query of ['?search=Theirs', `?connection=${other.connection}`, '?page_size=100&ordering=name']) {
        const { results } = (await (await get(`${BASE}${query}`)).json()) as { results: SignalBody[] };
        expect(results.filter((row) => row.id === other.signal || row.customer !== workspace.customerId)).toEqual([]);
      }
      expect(((await (await get(`${BASE}?search=Theirs`)).json()) as { count: number }).count).toBe(0);
    });
  });

  describe('list', () => {
    interface Fixture {
      id: number;
      name: string;
      status: Status;
      signal_type: string;
      model_instance: number | null;
      audience: number | null;
      connection: number | null;
    }
    interface ListBody {
      count: number;
      next: string | null;
      previous: string | null;
      results: SignalBody[];
    }

    let listWorkspace: Workspace;
    let viewer: Record<string, string>;
    const fixtures: Fixture[] = [];
    const refs = { model: 0, audience: 0, connectionA: 0, connectionB: 0 };

    beforeAll(async () => {
      listWorkspace = await createWorkspace(api);
      viewer = bearer((await login(api, await createUser(api, listWorkspace, { role: 'viewer' }))).access);
      const admin = bearer((await login(api, await createUser(api, listWorkspace, { role: 'admin' }))).access);
      refs.model = (await createModelInstance(api, listWorkspace)).id;
      refs.audience = await createAudience(admin);
      refs.connectionA = (await createConnection(api, listWorkspace)).id;
      refs.connectionB = (await createConnection(api, listWorkspace)).id;
      for (let index = 0; index < 25; index++) {
        const status = STATUSES[index % 5]!;
        const fixture: Omit<Fixture, 'id'> = {
          name: `List ${String(index).padStart(2, '0')} ${index % 2 ? 'odd' : 'even'}`,
          status,
          signal_type: ['conversion', 'value', 'score'][index % 3]!,
          model_instance: index % 4 === 0 ? refs.model : null,
          audience: index % 3 === 1 ? refs.audience : null,
          connection: status === 1 || status === 2 || status === 3 ? refs.connectionA : index % 2 ? refs.connectionB : null,
        };
        const initial = status === 0 || status === 4 ? status : 1;
        const config = fixture.connection === null ? {} : { config: GOOGLE_CONFIG };
        const response = await api.request(BASE, send('POST', { ...fixture, ...config, status: initial }, admin));
        expect(response.status).toBe(201);
        const id = ((await response.json()) as SignalBody).id;
        if (status === 2) expect((await api.request(`${BASE}${id}/`, send('PATCH', { status: 2 }, admin))).status).toBe(200);
        if (status === 3)
          await api.dataSource.query('UPDATE signals SET status = 3 WHERE customer_id = $1 AND id = $2', [listWorkspace.customerId, id]);
        fixtures.push({ id, ...fixture });
      }
    });

    const list = async (query: string) => {
      const response = await api.request(`${BASE}${query}`, { headers: viewer });
      return { status: response.status, body: (await response.json()) as ListBody & Problem };
    };
    const idsOf = (query: string) =>
      list(`${query}${query ? '&' : '?'}page_size=100`).then(({ body }) => body.results.map((row) => row.id));
    const newestFirst = (rows: Fixture[]) => rows.map((row) => row.id).sort((a, b) => b - a);

    it('pages newest first with absolute next/previous links', async () => {
      const first = await list('');
      expect(first.status).toBe(200);
      expect(first.body.count).toBe(25);
      expect(first.body.results.map((row) => row.id)).toEqual(newestFirst(fixtures).slice(0, 20));
      expect(first.body.previous).toBeNull();
      expect(first.body.next).toBe(`${api.baseUrl}${BASE}?page=2`);
      const second = await list('?page=2');
      expect(second.body.results.map((row) => row.id)).toEqual(newestFirst(fixtures).slice(20));
      expect(second.body.next).toBeNull();
      expect(second.body.previous).toBe(`${api.baseUrl}${BASE}?page=1`);
    });

    it('returns the same objects as GET', async () => {
      const { body } = await list('?page_size=1');
      expect(await ok(await get(`${BASE}${body.results[0]!.id}/`, viewer))).toEqual(body.results[0]);
    });

    it('walks one item per page up to the last page', async () => {
      const last = await list('?page_size=1&page=25');
      expect(last.status).toBe(200);
      expect(last.body.results.map((row) => row.id)).toEqual([Math.min(...fixtures.map((row) => row.id))]);
      expect(last.body.next).toBeNull();
      expect(last.body.previous).toBe(`${api.baseUrl}${BASE}?page_size=1&page=24`);
      expect((await list('?page_size=1&page=26')).status).toBe(404);
    });

    it('keeps the other query parameters in the links', async () => {
      const { body } = await list('?status=0&page_size=2&search=List&ordering=name');
      expect(body.count).toBe(5);
      expect(Object.fromEntries(new URL(body.next!).searchParams)).toEqual({
        status: '0',
        page_size: '2',
        search: 'List',
        ordering: 'name',
        page: '2',
      });
    });

    it('clamps page_size above 100', async () => {
      const { body } = await list('?page_size=101');
      expect(body.results).toHaveLength(25);
      expect(body.next).toBeNull();
    });

    it.each(STATUSES)('filters by status %i', async (status) => {
      const expected = newestFirst(fixtures.filter((row) => row.status === status));
      expect(expected).toHaveLength(5);
      expect(await idsOf(`?status=${status}`)).toEqual(expected);
    });

    it.each(['conversion', 'value', 'score'])('filters by signal_type %s', async (signalType) => {
      const expected = newestFirst(fixtures.filter((row) => row.signal_type === signalType));
      expect(expected.length).toBeGreaterThan(0);
      expect(await idsOf(`?signal_type=${signalType}`)).toEqual(expected);
    });

    it('filters by model_instance, audience and connection', async () => {
      const cases: [string, (row: Fixture) => boolean][] = [
        [`?model_instance=${refs.model}`, (row) => row.model_instance === refs.model],
        [`?audience=${refs.audience}`, (row) => row.audience === refs.audience],
        [`?connection=${refs.connectionA}`, (row) => row.connection === refs.connectionA],
        [`?connection=${refs.connectionB}`, (row) => row.connection === refs.connectionB],
        [`?status=1&signal_type=value`, (row) => row.status === 1 && row.signal_type === 'value'],
        [`?connection=${refs.connectionA}&status=2`, (row) => row.connection === refs.connectionA && row.status === 2],
      ];
      for (const [query, keep] of cases) {
        const expected = newestFirst(fixtures.filter(keep));
        expect({ query, count: expected.length > 0 }).toEqual({ query, count: true });
        expect({ query, ids: await idsOf(query) }).toEqual({ query, ids: expected });
      }
    });

    it('searches names ignoring case, with LIKE wildcards taken literally', async () => {
      expect(await idsOf('?search=ODD')).toEqual(newestFirst(fixtures.filter((row) => row.name.endsWith('odd'))));
      expect(await idsOf('?search=list%200')).toEqual(newestFirst(fixtures.filter((row) => row.name.startsWith('List 0'))));
      expect(await idsOf('?search=%25')).toEqual([]);
      expect(await idsOf('?search=_')).toEqual([]);
    });

    it("finds nothing for another workspace's references or ids that match nothing", async () => {
      for (const query of [
        `?connection=${other.connection}`,
        `?model_instance=${other.model}`,
        `?audience=${other.audience}`,
        '?model_instance=987654',
        '?audience=0',
        '?connection=-5',
      ]) {
        const { status, body } = await list(query);
        expect({ query, status, count: body.count, results: body.results }).toEqual({ query, status: 200, count: 0, results: [] });
      }
    });

    it('ignores unknown and empty parameters', async () => {
      expect((await list('?colour=blue&status=&connection=')).body.count).toBe(25);
    });

    it.each([
      ['?status=abc', { status: ['A valid integer is required.'] }],
      ['?status=1.5', { status: ['A valid integer is required.'] }],
      ['?status=9', { status: ['"9" is not a valid choice; choose one of 0, 1, 2, 3, 4.'] }],
      ['?status=-1', { status: ['"-1" is not a valid choice; choose one of 0, 1, 2, 3, 4.'] }],
      ['?status=active', { status: ['A valid integer is required.'] }],
      ['?signal_type=click', { signal_type: ['"click" is not a valid choice; choose one of "conversion", "value", "score".'] }],
      ['?model_instance=abc', { model_instance: ['A valid integer is required.'] }],
      ['?audience=1e3', { audience: ['A valid integer is required.'] }],
      ['?connection=null', { connection: ['A valid integer is required.'] }],
      ['?search=' + 'x'.repeat(256), { search: ['Ensure this field has no more than 255 characters.'] }],
      ['?page_size=0', { page_size: ['A positive integer is required.'] }],
      ['?page_size=abc', { page_size: ['A positive integer is required.'] }],
    ])('answers %s with 400', async (query, errors) => {
      const { status, body } = await list(query);
      expect({ status, code: body.code, errors: body.errors }).toEqual({ status: 400, code: 'validation_error', errors });
    });

    it.each(['?ordering=secret', '?ordering=-config', '?ordering=signal_type', '?ordering=--id'])(
      'answers an unknown ordering %s with 400 under ordering',
      async (query) => {
        const { status, body } = await list(query);
        expect(status).toBe(400);
        expect(Object.keys(body.errors ?? {})).toEqual(['ordering']);
      },
    );

    it.each(['?page=2&page_size=25', '?page=3', '?page=0', '?page=-1', '?page=abc'])(
      'answers %s with 404 "Invalid page."',
      async (query) => {
        const { status, body } = await list(query);
        expect({ status, code: body.code, detail: body.detail }).toEqual({ status: 404, code: 'not_found', detail: 'Invalid page.' });
      },
    );

    it.each(['id', 'name', 'status'] as const)('orders by %s both ways, ties broken by id', async (field) => {
      const ascending = (await list(`?ordering=${field}&page_size=100`)).body.results.map((row) => row.id);
      const descending = (await list(`?ordering=-${field}&page_size=100`)).body.results.map((row) => row.id);
      const key = (row: Fixture) => (field === 'id' ? row.id : row[field]);
      const sorted = [...fixtures].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id - b.id)).map((row) => row.id);
      expect(ascending).toEqual(sorted);
      expect(descending).toEqual([...sorted].reverse());
    });

    it.each(['created_at', 'updated_at'] as const)('orders by %s both ways', async (field) => {
      const ascending = (await list(`?ordering=${field}&page_size=100`)).body.results;
      const descending = (await list(`?ordering=-${field}&page_size=100`)).body.results;
      expect(ascending).toHaveLength(25);
      const stamps = ascending.map((row) => row[field]);
      expect(stamps).toEqual([...stamps].sort());
      expect(descending.map((row) => row.id)).toEqual(ascending.map((row) => row.id).reverse());
      if (field === 'created_at') expect(ascending.map((row) => row.id)).toEqual(fixtures.map((row) => row.id));
    });
  });

  describe('OpenAPI document', () => {
    it('documents every signal operation with its stable id and the integer status codes', async () => {
      const document = (await (await api.request('/api/schema/')).json()) as {
        paths: Record<string, Record<string, { operationId: string; parameters?: { name: string; schema: unknown }[] }>>;
        components: { schemas: Record<string, { properties: Record<string, { type?: string; enum?: unknown[] }> }> };
      };
      const operations = (path: string) =>
        Object.fromEntries(Object.entries(document.paths[path] ?? {}).map(([m, op]) => [m, op.operationId]));
      expect(operations(BASE)).toEqual({ get: 'signals_list', post: 'signals_create' });
      expect(operations(`${BASE}{id}/`)).toEqual({
        get: 'signals_retrieve',
        patch: 'signals_partial_update',
        delete: 'signals_destroy',
      });
      const status = document.paths[BASE]!.get!.parameters!.find((parameter) => parameter.name === 'status');
      expect(status?.schema).toEqual({
        type: 'integer',
        format: 'int32',
        enum: [0, 1, 2, 3, 4],
        'x-enum-varnames': ['draft', 'active', 'paused', 'failed', 'archived'],
        minimum: 0,
        maximum: 4,
      });
      for (const schema of ['SignalDto', 'CreateSignalDto', 'UpdateSignalDto']) {
        expect(document.components.schemas[schema]?.properties.status).toMatchObject({ type: 'integer', enum: [0, 1, 2, 3, 4] });
      }
    });
  });

  describe('permissions', () => {
    it('lets a viewer and a read-scoped API key read but not write', async () => {
      const signal = await created({ description: 'untouched' });
      const viewer = bearer((await login(api, await createUser(api, workspace, { role: 'viewer' }))).access);
      const readKey = apiKeyHeader((await createApiKey(api, workspace, { scope: 'read' })).key);
      for (const headers of [viewer, readKey]) {
        expect((await get(BASE, headers)).status).toBe(200);
        expect(await ok(await get(`${BASE}${signal.id}/`, headers))).toEqual(signal);
        for (const response of [
          await post({ name: name(), signal_type: 'score' }, headers),
          await patch(signal.id, { description: 'changed' }, headers),
          await remove(signal.id, headers),
        ]) {
          expect(response.status).toBe(403);
          expect(((await response.json()) as Problem).code).toBe('permission_denied');
        }
      }
      expect(await ok(await get(`${BASE}${signal.id}/`))).toEqual(signal);
    });

    it('lets an admin and a write-scoped API key write', async () => {
      const writeKey = apiKeyHeader((await createApiKey(api, workspace, { scope: 'write' })).key);
      const admin = bearer((await login(api, await createUser(api, workspace, { role: 'admin' }))).access);
      for (const headers of [writeKey, admin]) {
        const signal = await created({}, headers);
        expect(signal.customer).toBe(workspace.customerId);
        expect((await patch(signal.id, { description: 'changed' }, headers)).status).toBe(200);
        expect((await remove(signal.id, headers)).status).toBe(204);
      }
    });

    it('answers 401 without credentials', async () => {
      expect((await api.request(BASE)).status).toBe(401);
      expect((await api.request(BASE, send('POST', { name: 'x', signal_type: 'score' }, {}))).status).toBe(401);
    });
  });
});
