import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestApp, type TestApp } from './support/test-app.js';

const COMMITTED = fileURLToPath(new URL('../openapi.json', import.meta.url));

/**
 * The committed openapi.json is the API's contract under review: when code and document differ,
 * this fails. Regenerate with `npm run openapi:update` and commit the diff with the change.
 */
describe('OpenAPI document', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp();
  });
  afterAll(() => api.close());

  it('is served at /api/schema/ and equals the committed openapi.json', async () => {
    const response = await api.request('/api/schema/');
    expect(response.status).toBe(200);
    const served = await response.json();
    const text = `${JSON.stringify(served, null, 2)}\n`;
    if (process.env.UPDATE_OPENAPI === '1') await writeFile(COMMITTED, text);
    const committed = JSON.parse(await readFile(COMMITTED, 'utf8').catch(() => '{}'));
    expect(served).toEqual(committed);
  });

  it('is a valid OpenAPI 3 document, with every $ref resolvable', async () => {
    const document = (await (await api.request('/api/schema/')).json()) as object;
    const result = await new Validator().validate(structuredClone(document) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('gives every operation a unique snake_case operation id and documents its errors', async () => {
    const document = (await (await api.request('/api/schema/')).json()) as {
      paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
    };
    const operations = Object.values(document.paths).flatMap((item) => Object.values(item));
    const ids = operations.map((operation) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const operation of operations) {
      expect(operation.operationId).toMatch(/^[a-z0-9]+(_[a-z0-9]+)+$/);
      expect(operation.responses['500']).toBeDefined();
    }
  });

  it('is an OpenAPI 3 document with the problem+json schema', async () => {
    const document = (await (await api.request('/api/schema')).json()) as {
      openapi: string;
      components: { schemas: Record<string, unknown> };
    };
    expect(document.openapi).toMatch(/^3\./);
    expect(document.components.schemas.ProblemDetailsDto).toBeDefined();
  });

  it('shows, for every error response, an example with that status and its real code', async () => {
    const document = (await (await api.request('/api/schema/')).json()) as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { content?: Record<string, { example?: Record<string, unknown> }> }> }>
      >;
    };
    const expectedCode: Record<string, string[]> = {
      '400': ['validation_error', 'parse_error'],
      '401': ['not_authenticated', 'authentication_failed', 'token_not_valid'],
      '403': ['permission_denied'],
      '404': ['not_found'],
      '409': ['conflict'],
      '413': ['payload_too_large'],
      '415': ['unsupported_media_type'],
      '405': ['method_not_allowed'],
      '429': ['throttled'],
      '500': ['internal_error'],
      '503': ['service_unavailable'],
    };
    let checked = 0;
    for (const item of Object.values(document.paths)) {
      for (const operation of Object.values(item)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          if (!status.startsWith('4') && !status.startsWith('5')) continue;
          const example = response.content?.['application/problem+json']?.example;
          expect({
            status,
            example: example && { status: String(example.status), known: expectedCode[status]?.includes(String(example.code)) },
          }).toEqual({
            status,
            example: { status, known: true },
          });
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('describes every response', async () => {
    const document = (await (await api.request('/api/schema/')).json()) as {
      paths: Record<string, Record<string, { operationId: string; responses: Record<string, { description?: string }> }>>;
    };
    const undescribed = Object.values(document.paths).flatMap((item) =>
      Object.values(item).flatMap((operation) =>
        Object.entries(operation.responses)
          .filter(([, response]) => !response.description)
          .map(([status]) => `${operation.operationId} ${status}`),
      ),
    );
    expect(undescribed).toEqual([]);
  });

  it('documents the headers every response carries (test/contract-fuzz checks that nothing else is sent)', async () => {
    const document = (await (await api.request('/api/schema/')).json()) as {
      paths: Record<string, Record<string, { security?: object[]; responses: Record<string, { headers?: Record<string, unknown> }> }>>;
    };
    const missing: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const names = Object.keys(response.headers ?? {});
          const need = ['X-Request-Id'];
          if ((operation.security ?? []).length > 0 && status.startsWith('2')) need.push('RateLimit', 'RateLimit-Policy');
          if (status === '401') need.push('WWW-Authenticate');
          if (status === '429' || status === '503') need.push('Retry-After');
          for (const name of need) if (!names.includes(name)) missing.push(`${method.toUpperCase()} ${path} ${status}: ${name}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('describes every tag its operations use', async () => {
    const document = (await (await api.request('/api/schema/')).json()) as {
      tags?: { name: string; description?: string }[];
      paths: Record<string, Record<string, { tags?: string[] }>>;
    };
    const used = new Set(Object.values(document.paths).flatMap((item) => Object.values(item).flatMap((operation) => operation.tags ?? [])));
    const described = new Map((document.tags ?? []).map((tag) => [tag.name, tag.description ?? '']));
    for (const tag of used) expect({ tag, described: (described.get(tag) ?? '').length > 20 }).toEqual({ tag, described: true });
  });

  it('gives every field of every request and response schema an example, for Swagger UI and generated docs', async () => {
    const document = (await (await api.request('/api/schema/')).json()) as {
      components: { schemas: Record<string, { properties?: Record<string, { example?: unknown; $ref?: string; allOf?: unknown }> }> };
    };
    const missing = Object.entries(document.components.schemas).flatMap(([name, schema]) =>
      Object.entries(schema.properties ?? {})
        .filter(([, property]) => property.example === undefined && property.$ref === undefined && property.allOf === undefined)
        .map(([field]) => `${name}.${field}`),
    );
    expect(missing).toEqual([]);
  });

  it('serves Swagger UI at /api/docs/', async () => {
    const response = await api.request('/api/docs/');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(await response.text()).toContain('swagger-ui');
  });
});
