import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Operation, Schema } from './openapi-document.js';

/** A response as received, its body read once as text. */
export interface ReceivedResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** Every error body has exactly these members, plus `errors` for `validation_error` (docs/api-conventions.md). */
const PROBLEM_MEMBERS = ['type', 'title', 'status', 'code', 'detail', 'request_id'];

/** Headers the service itself sets, which the document must show wherever they are sent. */
const SERVICE_HEADERS = ['x-request-id', 'ratelimit', 'ratelimit-policy', 'retry-after', 'www-authenticate', 'idempotent-replayed'];

const mediaType = (headers: Headers) => (headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();

/**
 * Checks a response against what openapi.json documents for its operation (SPEC section 5):
 * never a 5xx, a documented status, a body valid against that status's schema, and every error
 * a problem+json body whose `request_id` is the `X-Request-Id` header. Returns the violations,
 * empty when the response keeps the contract.
 */
export class ResponseContract {
  private readonly ajv = new Ajv({ allErrors: true, strict: true });
  private readonly validators = new Map<Schema, ValidateFunction>();

  constructor() {
    addFormats.default(this.ajv);
    // OpenAPI 3.0's own keywords: `nullable` Ajv knows; these are annotations only (the member
    // names of a numeric enum, for client generators, included).
    this.ajv.addKeyword({ keyword: 'example' });
    this.ajv.addKeyword({ keyword: 'x-enum-varnames' });
    this.ajv.addFormat('password', true);
  }

  violations(operation: Operation, response: ReceivedResponse): string[] {
    const { status, headers, text } = response;
    const found: string[] = [];
    // A 503 too: the database is up during this test, so "unavailable" is a bug here.
    if (status >= 500) found.push(`server error ${status}`);
    const documented = operation.responses[String(status)] ?? operation.responses[`${String(status)[0]}XX`];
    if (!documented) found.push(`undocumented status ${status} (documented: ${Object.keys(operation.responses).join(', ')})`);

    for (const [name, header] of Object.entries(documented?.headers ?? {})) {
      if (header.required && !headers.has(name)) found.push(`missing documented header ${name}`);
    }
    // And the other way round: a header of the service's own that this response does not document.
    const documentedNames = new Set(Object.keys(documented?.headers ?? {}).map((name) => name.toLowerCase()));
    for (const name of SERVICE_HEADERS) if (headers.has(name) && !documentedNames.has(name)) found.push(`undocumented header ${name}`);

    let body: unknown;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        found.push(`body is not JSON (${mediaType(headers) || 'no content type'})`);
        return found;
      }
    }

    if (documented) {
      const content = documented.content ?? {};
      if (Object.keys(content).length === 0) {
        if (text !== '') found.push(`status ${status} documents no body, but one was sent`);
      } else {
        const type = mediaType(headers);
        const schema = content[type]?.schema;
        if (!(type in content)) found.push(`content type "${type}" is not documented for ${status} (${Object.keys(content).join(', ')})`);
        else if (text === '') found.push(`status ${status} documents a ${type} body, but none was sent`);
        else if (schema) found.push(...this.schemaViolations(schema, body));
      }
    }

    if (status >= 400) found.push(...problemViolations(status, headers, body));
    return found;
  }

  private schemaViolations(schema: Schema, body: unknown): string[] {
    let validate = this.validators.get(schema);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.validators.set(schema, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map((error) => `body${error.instancePath} ${error.message} (schema ${error.schemaPath})`);
  }
}

function problemViolations(status: number, headers: Headers, body: unknown): string[] {
  const found: string[] = [];
  if (mediaType(headers) !== 'application/problem+json')
    found.push(`error is "${headers.get('content-type')}", not application/problem+json`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [...found, 'error body is not a JSON object'];
  const problem = body as Record<string, unknown>;
  for (const member of PROBLEM_MEMBERS) if (!(member in problem)) found.push(`error body has no "${member}"`);
  const allowed = problem.code === 'validation_error' ? [...PROBLEM_MEMBERS, 'errors'] : PROBLEM_MEMBERS;
  const extra = Object.keys(problem).filter((member) => !allowed.includes(member));
  if (extra.length > 0) found.push(`error body has unexpected members ${extra.join(', ')}`);
  if (problem.status !== status) found.push(`error body says status ${String(problem.status)}, the response is ${status}`);
  const requestId = headers.get('x-request-id');
  if (!requestId) found.push('no X-Request-Id header');
  else if (problem.request_id !== requestId)
    found.push(`request_id ${String(problem.request_id)} is not the X-Request-Id header ${requestId}`);
  return found;
}
