import type { INestApplication } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../common/errors/api-error.js';
import { DocumentBuilder, type OpenAPIObject, type OperationObject, SwaggerModule } from '@nestjs/swagger';
import { ApiDocument } from './api-document.js';
import { ProblemDetailsDto, problemResponse } from '../common/errors/problem-details.schema.js';
import type { AppConfig } from '../config/app-config.js';
import { REQUEST_ID_PATTERN } from '../common/http/request-id.js';
import { APP_CONFIG } from '../config/config.token.js';

export const API_VERSION = '1.0.0';

/** `AudiencesController.partialUpdate` → `audiences_partial_update`: stable, readable operation ids. */
export function operationId(controllerKey: string, methodKey: string): string {
  const snake = (text: string) => text.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
  return `${snake(controllerKey.replace(/Controller$/, ''))}_${snake(methodKey)}`;
}

/**
 * Generates the OpenAPI 3 document from the controllers and DTOs; the committed openapi.json is
 * this, serialised. Also publishes it to the app's ApiDocument, where the MCP tools read their schemas.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const deployment = app.get<AppConfig>(APP_CONFIG, { strict: false }).apiDocument;
  const config = new DocumentBuilder()
    .setTitle('Audience and Signal Platform API')
    .setDescription(
      'Multi-tenant API for audiences, signals, AI model instances and ad-platform connections. ' +
        'Every request is scoped to the workspace (customer) of its credential. Errors are ' +
        '`application/problem+json` bodies with a stable `code` and the `request_id` of the ' +
        '`X-Request-Id` response header.',
    )
    .setVersion(API_VERSION)
    .setExternalDoc('Guides and the interactive reference of this deployment', deployment.docsUrl)
    // Relative: the document is served by the API itself, so its own origin is the server.
    .addServer('/', 'This service, in production or local: the origin the document is served from', undefined, { 'x-internal': false })
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          'An access token from `POST /api/v1/jwt/create/`: `Authorization: Bearer <access>`. A user; lives 15 minutes. ' +
          'Tokens follow RFC8725 (JSON Web Token Best Current Practices): HS256 only (any other `alg`, `none` included, is refused), ' +
          'issuer, expiry and token type checked, and each token tied to a login session that logout ends.',
      },
      'jwt',
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description:
          'A static API key issued by the operator (`audience-admin apikey create`). The header value is the word `Api-Key`, one space, ' +
          'then the key: `Authorization: Api-Key <prefix>.<secret>`. In Swagger UI, type the whole value including `Api-Key `. ' +
          'A key acts for its workspace with scope `read` or `write`; it is not a user.',
      },
      'api_key',
    )
    .addTag('auth', 'Email and password → JWT pair (djoser-compatible paths): create, refresh (rotating), verify, logout.')
    .addTag('users', 'The signed-in user: `/users/me/`. JWT only.')
    .addTag('audiences', 'Who to target: rule-based, model-based or uploaded audiences and their destination connections.')
    .addTag('signals', 'Data streams sent to the ad platforms: status codes 0–4, an optional model, audience and destination connection.')
    .addTag('ai-model-instances', 'AI models of the workspace and their lifecycle: pending → training → ready or failed; archived.')
    .addTag(
      'people',
      'Your customers as audiences select them: identifiers hashed on arrival (never stored or returned in clear), traits and consent. Batch upsert by external_id; DELETE erases.',
    )
    .addTag(
      'imports',
      'Files of people of any size (CSV or NDJSON), streamed and hashed on arrival, staged, then merged by a job: all accepted rows or nothing.',
    )
    .addTag(
      'syncs',
      'Audience syncs to Google (Data Manager API) and Meta (custom audiences): each run sends the difference since the destination last accepted, with counts, skips and errors.',
    )
    .addTag('connections', 'Google Ads and Meta Ads accounts of the workspace. Deleting one revokes its grant and detaches its signals.')
    .addTag(
      'webhooks',
      'Endpoints of yours that hear of background events (syncs, connections, signals, imports), signed as Standard Webhooks. Admins manage them.',
    )
    .addTag('mcp-tokens', 'Your personal tokens for AI agents on `/mcp` (Model Context Protocol). The secret is shown once. JWT only.')
    .addTag(
      'web-session',
      'The web interface’s own sign-in at `/app/session/`: the refresh token lives in an HttpOnly cookie. Not for API clients.',
    )
    .build();
  // The deployment's own (API_CONTACT_*, API_DOCS_URL): who answers integrators, and where its guides
  // are. Set here rather than by setContact(), which would write an empty url and email when unset.
  config.info.contact = {
    name: deployment.contactName,
    ...(deployment.contactUrl !== undefined && { url: deployment.contactUrl }),
    ...(deployment.contactEmail !== undefined && { email: deployment.contactEmail }),
  };
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: operationId,
    extraModels: [ProblemDetailsDto],
  });
  applyAccessRules(document);
  applyCommonErrors(document);
  applyResponseHeaders(document);
  withoutRequestDefaults(document);
  withResponseLimits(document);
  withIntegerFormats(document);
  // SPEC section 3: API paths end with "/" (both forms are served); document the canonical one.
  document.paths = Object.fromEntries(
    Object.entries(document.paths).map(([path, item]) => [path.startsWith('/api/v1/') && !path.endsWith('/') ? `${path}/` : path, item]),
  );
  app.get(ApiDocument, { strict: false }).publish(document);
  return document;
}

/**
 * Request bodies without `default`s. PATCH bodies are built with PartialType from the create
 * bodies, which copies each field's create-time default; on a PATCH a missing field keeps its
 * value, so those defaults would mislead and are dropped. On create bodies the default is what the
 * server applies, but client generators at their default settings (openapi-typescript's
 * `defaultNonNullable`) make every field with a `default` required, so a plain create call would
 * not compile: the default moves into the field's description ("Default: …") instead.
 */
function withoutRequestDefaults(document: OpenAPIObject): void {
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
    const update = name.startsWith('Update');
    if ((!update && !name.startsWith('Create')) || !('properties' in schema) || !schema.properties) continue;
    for (const property of Object.values(schema.properties) as { default?: unknown; description?: string }[]) {
      if (!('default' in property)) continue;
      if (!update) {
        const stated = `Default: \`${JSON.stringify(property.default)}\`.`;
        property.description = property.description ? `${property.description} ${stated}` : stated;
      }
      delete property.default;
    }
  }
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

function operationsOf(document: OpenAPIObject): OperationObject[] {
  return Object.values(document.paths).flatMap((path) => METHODS.flatMap((method) => path[method] ?? []));
}

/**
 * Writes each operation's security from its access marker (see common/access/access.decorators.ts) and the
 * errors every protected operation can answer, so the document and the guard say the same thing.
 */
function applyAccessRules(document: OpenAPIObject): void {
  for (const operation of operationsOf(document)) {
    const extended = operation as OperationObject & { 'x-access'?: string };
    const access = extended['x-access'] ?? 'workspace';
    delete extended['x-access'];
    operation.responses ??= {};
    operation.responses['500'] ??= problemResponse(500, 'Unexpected error (`internal_error`); quote the request id.');
    if (access === 'public') {
      operation.security = [];
      continue;
    }
    // `{}` first: no credential is needed, but one that is sent must be a valid JWT.
    if (access === 'public_or_personal') operation.security = [{}, { jwt: [] }];
    else operation.security = access === 'personal' ? [{ jwt: [] }] : [{ jwt: [] }, { api_key: [] }];
    operation.responses['401'] ??= problemResponse(
      401,
      access === 'public_or_personal'
        ? 'An Authorization header was sent and it is not a valid access token (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`.'
        : 'No credentials (`not_authenticated`) or bad ones (`authentication_failed`, `token_not_valid`); see `WWW-Authenticate`.',
    );
    operation.responses['403'] ??= problemResponse(
      403,
      access === 'personal' || access === 'public_or_personal'
        ? 'An API key: this endpoint is for users only (`permission_denied`).'
        : access === 'workspace_admin'
          ? 'A write by anyone but an admin or a write-scoped API key: an editor, a viewer or a read-only key (`permission_denied`).'
          : 'A viewer or a read-only API key trying to write (`permission_denied`).',
    );
    operation.responses['429'] ??= problemResponse(
      429,
      'Rate limit reached, or your workspace has too much running at once (its share of the database, `WORKSPACE_POOL_SHARE`) (`throttled`); retry after `Retry-After` seconds.',
    );
  }
}

/**
 * The errors that do not depend on the controller: any body goes through the JSON parser before
 * the handler (400 `parse_error`, 413 over 1 MiB, 415 not JSON: SPEC section 5), and any operation
 * can meet a dependency that is down (503, SPEC section 8).
 */
function applyCommonErrors(document: OpenAPIObject): void {
  for (const operation of operationsOf(document)) {
    if (operation.requestBody) {
      for (const status of ['413', '415']) operation.responses[status] ??= problemResponse(Number(status));
    }
    // Every operation reads a query string, and one with a NUL or an unpaired surrogate is a 400 (SPEC section 8).
    operation.responses['400'] ??= problemResponse(400);
    operation.responses['503'] ??= problemResponse(503);
  }
}

/** The headers the service sends, as every response that can carry one documents them. */
const HEADERS = {
  requestId: {
    description:
      'The request id: the `X-Request-Id` sent (1–128 characters of `[A-Za-z0-9._:-]`), else a generated UUID. Quote it in reports.',
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: 128, pattern: REQUEST_ID_PATTERN, example: '9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10' },
  },
  rateLimit: {
    description:
      'What is left of the caller’s budget this minute (IETF RateLimit draft): `"default";r=<remaining>;t=<seconds to reset>`. ' +
      'Absent on a 413 or 415, which the body parser answers before the budget is counted.',
    schema: { type: 'string', maxLength: 64, pattern: '^"default";r=[0-9]+;t=[0-9]+$', example: '"default";r=597;t=42' },
  },
  rateLimitPolicy: {
    description: 'The budget: `"default";q=<requests>;w=60` (RATE_LIMIT_PER_MINUTE per identity, or per client IP on public endpoints).',
    schema: { type: 'string', maxLength: 64, pattern: '^"default";q=[0-9]+;w=[0-9]+$', example: '"default";q=600;w=60' },
  },
  wwwAuthenticate: {
    description: 'The credentials this endpoint takes (`Bearer realm="api"`, `Api-Key`), and `error="invalid_token"` for a bad token.',
    required: true,
    // One or more challenges (RFC 9110 section 11.6.1), each a scheme this service takes and its realm.
    schema: {
      type: 'string',
      maxLength: 256,
      pattern: '^(Bearer|Api-Key) realm="(api|mcp)"(, error="invalid_token")?(, (Bearer|Api-Key) realm="(api|mcp)")*$',
      example: 'Bearer realm="api"',
    },
  },
  allowOrigin: {
    description:
      'Only with CORS on (CORS_ORIGINS, off by default) and an `Origin` it lists: that origin, so a browser page there may read the answer.',
    schema: { type: 'string', format: 'uri', maxLength: 2048, example: 'https://app.example.com' },
  },
  idempotentReplayed: {
    description: '`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`; absent otherwise.',
    schema: { type: 'string', enum: ['true'] },
  },
};

/**
 * Every response documents the headers it carries (issue 15): `X-Request-Id` on all of them; the
 * `RateLimit` pair on every response of an operation that spends a budget (the guard sets them
 * before anything can fail but authentication; optional headers, since a 413 or 415 comes from
 * the body parser before the guard); `WWW-Authenticate` on 401; `Idempotent-Replayed` on the
 * successes of operations that take an `Idempotency-Key`; `Access-Control-Allow-Origin` (optional:
 * only with CORS on) everywhere. `Retry-After` comes with the 429 and 503 responses themselves
 * (problem-details.schema.ts).
 */
function applyResponseHeaders(document: OpenAPIObject): void {
  document.components ??= {};
  document.components.headers = {
    'X-Request-Id': HEADERS.requestId,
    RateLimit: HEADERS.rateLimit,
    'RateLimit-Policy': HEADERS.rateLimitPolicy,
    'WWW-Authenticate': HEADERS.wwwAuthenticate,
    'Idempotent-Replayed': HEADERS.idempotentReplayed,
    'Access-Control-Allow-Origin': HEADERS.allowOrigin,
  } as unknown as NonNullable<NonNullable<OpenAPIObject['components']>['headers']>;
  const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
  for (const operation of operationsOf(document)) {
    const limited = (operation.security ?? []).length > 0 || operation.responses['429'] !== undefined;
    const idempotent = (operation.parameters ?? []).some((parameter) => 'name' in parameter && parameter.name === 'Idempotency-Key');
    for (const [status, response] of Object.entries(operation.responses)) {
      if (!response || !('description' in response)) continue;
      const headers = { ...(response.headers ?? {}) } as Record<string, object>;
      headers['X-Request-Id'] = ref('X-Request-Id');
      headers['Access-Control-Allow-Origin'] = ref('Access-Control-Allow-Origin');
      if (limited) {
        headers.RateLimit = ref('RateLimit');
        headers['RateLimit-Policy'] = ref('RateLimit-Policy');
      }
      if (status === '401') headers['WWW-Authenticate'] = ref('WWW-Authenticate');
      if (idempotent && status.startsWith('2')) headers['Idempotent-Replayed'] = ref('Idempotent-Replayed');
      response.headers = headers;
    }
  }
}

/** Keywords that bound a value, copied from a field's write rules to the same field of its responses. */
const LIMITS = ['minLength', 'maxLength', 'minimum', 'maximum', 'maxItems', 'pattern'] as const;

/** Timestamps as the API writes them: ISO 8601 UTC with milliseconds, `2026-11-21T10:00:00.000Z`. */
const TIMESTAMP_LENGTH = 24;

/**
 * Response fields bounded as their write rules bound them: a field of `AudienceDto` (and of
 * `AudienceDetailDto`) takes the limits of the same field of `CreateAudienceDto` (or `Update…`), since nothing else can be
 * stored; a timestamp is always 24 characters. The rules stay stated once, on the write DTOs.
 */
function withResponseLimits(document: OpenAPIObject): void {
  type Schema = Record<string, unknown> & { properties?: Record<string, Record<string, unknown>>; items?: Record<string, unknown> };
  const schemas = (document.components?.schemas ?? {}) as Record<string, Schema>;
  for (const [name, schema] of Object.entries(schemas)) {
    if (/^(Create|Update)(?!d)/.test(name) || !schema.properties) continue;
    const base = name
      .replace(/^Created/, '')
      .replace(/Dto$/, '')
      .replace(/Detail$/, '');
    const writers = [schemas[`Create${base}Dto`], schemas[`Update${base}Dto`]].filter((writer) => writer?.properties);
    for (const [field, property] of Object.entries(schema.properties)) {
      if (property.format === 'date-time') {
        property.minLength ??= TIMESTAMP_LENGTH;
        property.maxLength ??= TIMESTAMP_LENGTH;
        continue;
      }
      const rule = writers.map((writer) => writer!.properties![field]).find((candidate) => candidate !== undefined);
      if (!rule) continue;
      for (const limit of LIMITS) if (property[limit] === undefined && rule[limit] !== undefined) property[limit] = rule[limit];
      const items = rule.items as Record<string, unknown> | undefined;
      const own = property.items as Record<string, unknown> | undefined;
      if (items && own) for (const limit of LIMITS) if (own[limit] === undefined && items[limit] !== undefined) own[limit] = items[limit];
    }
  }
}

const INT32_MAX = 2 ** 31 - 1;

/**
 * Every integer's wire format, from the limits its field states: `int32` when its maximum fits,
 * else `int64` (ids and counts reach 2^53 - 1). Client generators pick their number types from
 * it. A field states its limits once (validation/fields.ts and the DTOs); only the format is derived.
 */
function withIntegerFormats(document: OpenAPIObject): void {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    const schema = node as { type?: unknown; format?: string; maximum?: number };
    if (schema.type === 'integer' && schema.format === undefined)
      schema.format = schema.maximum !== undefined && schema.maximum <= INT32_MAX ? 'int32' : 'int64';
    Object.values(node).forEach(visit);
  };
  visit(document.paths);
  visit(document.components);
}

/**
 * The files Swagger UI's page loads: the page itself, its script and style bundles, the script
 * that points it at /api/schema/, and its icons. swagger-ui-dist's folder holds more (its
 * package.json, README, source maps, other bundles), which a public server has no reason to hand
 * out.
 */
const DOCS_FILES = new Set([
  '',
  'index.html',
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'swagger-ui-init.js',
  'favicon-16x16.png',
  'favicon-32x32.png',
]);

/** Serves the document at /api/schema/ and Swagger UI at /api/docs/, with nothing but the files the page needs. */
export function mountApiDocs(app: INestApplication, document: OpenAPIObject): void {
  const fastify = (app.getHttpAdapter() as unknown as { getInstance(): FastifyInstance }).getInstance();
  // A hook of the docs routes alone (attached as SwaggerModule registers them), so no other request pays for it.
  const onlyPageFiles = (request: FastifyRequest, _reply: unknown, done: (error?: Error) => void) => {
    const file = request.url.slice('/api/docs/'.length).split('?', 1)[0]!;
    done(DOCS_FILES.has(file) ? undefined : ApiError.notFound());
  };
  fastify.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/docs/')) return;
    const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [...existing, onlyPageFiles] as typeof route.onRequest;
  });
  SwaggerModule.setup('api/docs', app, document, {
    jsonDocumentUrl: 'api/schema',
    raw: ['json'],
    customSiteTitle: 'Audience and Signal Platform API',
    swaggerOptions: { persistAuthorization: true, displayOperationId: true },
  });
}
