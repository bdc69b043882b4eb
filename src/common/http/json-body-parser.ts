import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJsonParse from 'secure-json-parse';
import { ApiError } from '../errors/api-error.js';
import { checkJsonStrings, checkJsonText, MAX_JSON_KEYS } from './json-limits.js';

/** Fastify's own 415, which the exception filter words for the client. */
const unsupportedMediaType = () =>
  Object.assign(new Error('Unsupported Media Type'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 });

/**
 * A form body, for the routes that declare `@RouteConfig({ formBody: true })` (the social-login
 * POST, which djoser clients send as a form); every other route answers it with 415. A repeated
 * field becomes a list, which the DTO then refuses. Like a JSON body, a form may carry at most
 * MAX_JSON_KEYS fields (SPEC section 8), counted on the text before anything is decoded, and a
 * repeated field is appended in place, so the cost stays linear in the body (copying the list on
 * every repeat made 30,000 repeats of one field a 17-second stall).
 */
function parseForm(request: FastifyRequest, body: string | Buffer, done: (error: Error | null, value?: unknown) => void): void {
  if ((request.routeOptions.config as { formBody?: boolean } | undefined)?.formBody !== true) return done(unsupportedMediaType());
  const value: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  const text = body.toString();
  try {
    if (formFieldsExceed(text, MAX_JSON_KEYS))
      throw new ApiError(400, 'parse_error', `The form body has more than ${MAX_JSON_KEYS} fields.`);
    for (const [name, field] of new URLSearchParams(text)) {
      const previous = value[name];
      if (previous === undefined) value[name] = field;
      else if (Array.isArray(previous)) previous.push(field);
      else value[name] = [previous, field];
    }
    checkJsonStrings(value);
  } catch (error) {
    return done(error as Error);
  }
  done(null, { ...value });
}

/**
 * True when `text` has more than `limit` non-empty `&`-separated fields (the ones URLSearchParams
 * would yield): a scan that stops at the first field past the limit.
 */
function formFieldsExceed(text: string, limit: number): boolean {
  let fields = 0;
  for (let start = 0; start <= text.length;) {
    const end = text.indexOf('&', start);
    const stop = end === -1 ? text.length : end;
    if (stop > start && ++fields > limit) return true;
    start = stop + 1;
  }
  return false;
}

/** SPEC section 8: bodies over 1 MiB → 413. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * JSON is the only body the API takes (SPEC section 5): Fastify's text/plain parser is removed
 * so any other content type is a 415. An empty JSON body reads as no body (so a bodyless POST
 * such as logout works with any client), and `__proto__`/`constructor` keys are refused so a
 * body cannot pollute prototypes further down. Depth, key count and unstorable strings are
 * checked here, before the validation pipe sees the body (see json-limits.ts). A route that takes
 * many small objects raises the total key count with `@RouteConfig({ maxJsonKeys })`; no single
 * object may still have more than MAX_JSON_KEYS.
 */
export function registerJsonBodyParser(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  const parse = (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, value?: unknown) => void) => {
    const text = body.toString();
    if (text.trim() === '') return done(null, undefined);
    let value: unknown;
    try {
      checkJsonText(text, (request.routeOptions.config as { maxJsonKeys?: number } | undefined)?.maxJsonKeys);
      value = secureJsonParse.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
      checkJsonStrings(value);
    } catch (error) {
      return done(error instanceof ApiError ? error : new ApiError(400, 'parse_error', 'Malformed JSON in the request body.'), undefined);
    }
    done(null, value);
  };
  fastify.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES }, parse);
  // A CSV or NDJSON file, for the routes that declare `@RouteConfig({ streamBody: true })` (imports,
  // SPEC 10.1): handed over as the request stream itself, never buffered, so Fastify's bodyLimit
  // does not apply and the route counts the bytes against its own limit (IMPORT_MAX_BYTES).
  // Every other route answers these types 415, as before.
  fastify.addContentTypeParser(['text/csv', 'application/x-ndjson'], (request, payload, done) => {
    if ((request.routeOptions.config as { streamBody?: boolean } | undefined)?.streamBody !== true) return done(unsupportedMediaType());
    done(null, payload);
  });
  fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES }, parseForm);
  fastify.addContentTypeParser(/^application\/[\w.+-]+\+json$/, { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES }, parse);
}
