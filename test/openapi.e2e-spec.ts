import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { bearer, createUser, createWorkspace, json, login } from './support/factories.js';
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

  it('names the members of every numeric enum (x-enum-varnames), so generators do not emit NUMBER_0', async () => {
    const document = (await (await api.request('/api/schema/')).json()) as object;
    const unnamed: string[] = [];
    const visit = (node: unknown, path: string): void => {
      if (typeof node !== 'object' || node === null) return;
      const schema = node as { type?: string; enum?: unknown[]; 'x-enum-varnames'?: string[] };
      if ((schema.type === 'integer' || schema.type === 'number') && Array.isArray(schema.enum)) {
        if (schema['x-enum-varnames']?.length !== schema.enum.length) unnamed.push(path);
      }
      for (const [key, value] of Object.entries(node)) visit(value, `${path}/${key}`);
    };
    visit(document, '');
    expect(unnamed).toEqual([]);
  });

  it("marks the web interface's own endpoints internal, so generated SDKs leave them out", async () => {
    const document = (await (await api.request('/api/schema/')).json()) as {
      paths: Record<string, Record<string, { 'x-internal'?: boolean }>>;
    };
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        expect({ path, method, internal: operation['x-internal'] === true }).toEqual({
          path,
          method,
          internal: path.startsWith('/app/session/'),
        });
      }
    }
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

  it('names whom to contact and where the guides are (info.contact, externalDocs)', async () => {
    const document = (await (await api.request('/api/schema/')).json()) as {
      info: { contact?: { name?: string } };
      externalDocs?: { url?: string; description?: string };
    };
    expect(document.info.contact?.name).toBe(api.config.apiDocument.contactName);
    expect(document.externalDocs).toEqual({ description: expect.any(String), url: api.config.apiDocument.docsUrl });
  });

  it('shapes JWTs, request ids, emails, URIs and the RateLimit headers, and real answers fit those shapes', async () => {
    type Shaped = { format?: string; pattern?: string };
    const document = (await (await api.request('/api/schema/')).json()) as {
      components: { schemas: Record<string, { properties: Record<string, Shaped> }>; headers: Record<string, { schema: Shaped }> };
      paths: Record<string, Record<string, { parameters?: { name: string; schema: Shaped }[] }>>;
    };
    const { schemas, headers } = document.components;
    const shapes = {
      jwt: [
        schemas.TokenPairDto!.properties.access!,
        schemas.TokenPairDto!.properties.refresh!,
        schemas.TokenRefreshDto!.properties.refresh!,
      ],
      requestId: [headers['X-Request-Id']!.schema, schemas.ProblemDetailsDto!.properties.request_id!],
      email: [
        schemas.TokenObtainDto!.properties.email!,
        schemas.CurrentUserDto!.properties.email!,
        schemas.SocialLoginUserDto!.properties.email!,
      ],
      uri: [schemas.SocialLoginDto!.properties.redirect_uri!, schemas.SocialLoginDto!.properties.iss!],
      rateLimit: [headers.RateLimit!.schema, headers['RateLimit-Policy']!.schema, headers['WWW-Authenticate']!.schema],
    };
    for (const [kind, list] of Object.entries(shapes))
      for (const schema of list)
        expect({ kind, shaped: schema.format !== undefined || schema.pattern !== undefined }).toEqual({ kind, shaped: true });
    expect(shapes.email.map((schema) => schema.format)).toEqual(['email', 'email', 'email']);
    expect(shapes.uri.map((schema) => schema.format)).toEqual(['uri', 'uri']);

    const fits = (value: string | null, schema: Shaped) => value !== null && new RegExp(schema.pattern!).test(value);
    const user = await createUser(api, await createWorkspace(api));
    const pair = await login(api, user);
    for (const token of [pair.access, pair.refresh]) expect(fits(token, shapes.jwt[0]!)).toBe(true);
    const listed = await api.request('/api/v1/audiences/', { headers: { ...bearer(pair.access), 'x-request-id': 'trace.1:a-b_c' } });
    expect(listed.headers.get('x-request-id')).toBe('trace.1:a-b_c');
    expect(fits(listed.headers.get('ratelimit'), headers.RateLimit!.schema)).toBe(true);
    expect(fits(listed.headers.get('ratelimit-policy'), headers['RateLimit-Policy']!.schema)).toBe(true);
    for (const unauthorised of [
      await api.request('/api/v1/audiences/'),
      await api.request('/api/v1/jwt/verify/', json({ token: 'not-a-token' })),
      await api.request('/mcp', json({ jsonrpc: '2.0', id: 1, method: 'ping' })),
    ]) {
      expect(unauthorised.status).toBe(401);
      expect(fits(unauthorised.headers.get('www-authenticate'), headers['WWW-Authenticate']!.schema)).toBe(true);
      const problem = (await unauthorised.json()) as { request_id: string };
      expect(fits(problem.request_id, headers['X-Request-Id']!.schema)).toBe(true);
    }
  });

  it('serves Swagger UI at /api/docs/', async () => {
    const response = await api.request('/api/docs/');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(await response.text()).toContain('swagger-ui');
  });
});
