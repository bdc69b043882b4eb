import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedDemoData } from '../src/demo/demo-data.js';
import { ensureDemoWorkspace } from '../src/demo/demo-workspace.js';
import { bearer, json, login } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

type Json = Record<string, unknown>;
type Schema = Json & { $ref?: string; properties?: Record<string, Schema>; items?: Schema; allOf?: Schema[]; readOnly?: boolean };
interface Media {
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, { summary?: string; value: unknown }>;
}
interface Operation {
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/** Fields the server writes itself, which no example can predict. */
// `destinations` follow `connections` and the platforms (a demo connection lacks the Data Manager scope): the server's to say.
const GENERATED = new Set([
  'id',
  'customer',
  'created_at',
  'updated_at',
  'token',
  'prefix',
  'expires_at',
  'last_used_at',
  'secret',
  'destinations',
]);

/**
 * What Swagger UI's Try-it-out sends and shows (issue 25, item 15): the first named example of a
 * request body, else its `example`, else one composed from its fields' examples (read-only fields
 * left out); the 201 example with the same name, else the one composed from the response schema.
 */
function resolve(document: Document, schema: Schema): Schema {
  return schema.$ref ? resolve(document, document.components.schemas[schema.$ref.split('/').pop()!]!) : schema;
}

function composed(document: Document, schema: Schema, forRequest: boolean): unknown {
  const resolved = resolve(document, schema);
  if (resolved.allOf) return composed(document, resolved.allOf[0]!, forRequest);
  if (resolved.example !== undefined) return resolved.example;
  if (resolved.properties) {
    return Object.fromEntries(
      Object.entries(resolved.properties)
        .filter(([, property]) => !(forRequest && resolve(document, property).readOnly))
        .map(([name, property]) => [name, composed(document, property, forRequest)]),
    );
  }
  if (resolved.items) return [composed(document, resolved.items, forRequest)];
  return undefined;
}

function examplesOf(document: Document, media: Media, forRequest: boolean): [string, unknown][] {
  if (media.examples) return Object.entries(media.examples).map(([name, example]) => [name, example.value]);
  return [['default', media.example ?? composed(document, media.schema!, forRequest)]];
}

/**
 * The create operations: POST on a collection of /api/v1/ answering 201 with the object made (an
 * `id`). `POST /api/v1/syncs/` answers runs it may not have made (coalesced): test/syncs covers it.
 */
function createOperations(document: Document): [string, Operation][] {
  return Object.entries(document.paths)
    .filter(([path, item]) => /^\/api\/v1\/[a-z-]+\/$/.test(path) && item.post?.responses['201'] && item.post.requestBody)
    .filter(
      ([, item]) => resolve(document, item.post!.responses['201']!.content!['application/json']!.schema!).properties?.id !== undefined,
    )
    .map(([path, item]) => [path, item.post!]);
}

function pick(object: unknown, keys: string[]): Json {
  return Object.fromEntries(keys.map((key) => [key, (object as Json)[key]]));
}

describe('examples of the API document, tried in the demo workspace', () => {
  let api: TestApp;
  let document: Document;
  let access: string;
  /** Ids of the demo workspace's own objects, for the examples that name references. */
  let references: Record<string, number>;

  beforeAll(async () => {
    api = await startTestApp();
    const demo = (await ensureDemoWorkspace(api.dataSource, mkdtempSync(join(tmpdir(), 'demo-'))))!;
    await seedDemoData(api.app, demo);
    access = (await login(api, demo)).access;
    document = (await (await api.request('/api/schema/')).json()) as Document;
    const first = async (path: string, filter = '') => {
      const page = (await (await api.request(`/api/v1/${path}/?page_size=1${filter}`, { headers: bearer(access) })).json()) as {
        results: { id: number }[];
      };
      return page.results[0]!.id;
    };
    references = {
      model_instance: await first('ai-model-instances', '&status=ready'),
      audience: await first('audiences'),
      connection: await first('connections'),
    };
  });
  afterAll(() => api.close());

  /** Sends an example and holds the answer to the 201 example of the same name, apart from what the server generates. */
  async function tryExample(path: string, operation: Operation, index: number, withReferences: (value: Json) => Json) {
    const request = examplesOf(document, operation.requestBody!.content['application/json']!, true)[index]!;
    const responses = examplesOf(document, operation.responses['201']!.content!['application/json']!, false);
    const [name, body] = request;
    const response = responses.find(([other]) => other === name) ?? responses[0]!;
    const answer = await api.request(path, { method: 'POST', ...json(withReferences(body as Json), bearer(access)) });
    const text = await answer.text();
    expect({ path, example: name, status: answer.status, body: answer.status === 201 ? undefined : text }).toEqual({
      path,
      example: name,
      status: 201,
      body: undefined,
    });
    const shown = withReferences(response[1] as Json);
    const compared = Object.keys(shown).filter((key) => !GENERATED.has(key));
    // The 201 example says what the request example gives, field by field: it cannot contradict it.
    expect({ path, example: name, fields: pick(JSON.parse(text), compared) }).toEqual({
      path,
      example: name,
      fields: pick(shown, compared),
    });
  }

  it("answers Try-it-out's default request of every create operation with a 201 its own 201 example shows", async () => {
    const operations = createOperations(document);
    expect(operations.map(([path]) => path)).toEqual(expect.arrayContaining(['/api/v1/audiences/', '/api/v1/signals/']));
    for (const [path, operation] of operations) await tryExample(path, operation, 0, (value) => value);
  });

  it('names the other request examples of a create operation, each valid once its ids are ones of the workspace', async () => {
    const replace = (value: Json): Json => {
      const copy = { ...value };
      for (const field of ['model_instance', 'audience', 'connection'])
        if (typeof copy[field] === 'number') copy[field] = references[field];
      if (Array.isArray(copy.connections)) copy.connections = copy.connections.map(() => references.connection);
      return copy;
    };
    let tried = 0;
    for (const [path, operation] of createOperations(document)) {
      const media = operation.requestBody!.content['application/json']!;
      const names = Object.keys(media.examples ?? {});
      for (let index = 1; index < names.length; index++) {
        await tryExample(path, operation, index, replace);
        tried++;
      }
    }
    // An audience from a model, one uploaded, and a signal that names its model, audience and connection.
    expect(tried).toBeGreaterThanOrEqual(3);
  });
});
