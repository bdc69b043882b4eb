import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJsonParse from 'secure-json-parse';
import { ApiError } from '../errors/api-error.js';
import { checkJsonStrings, checkJsonText } from './json-limits.js';

/** Fastify's own 415, which the exception filter words for the client. */
const unsupportedMediaType = () =>
  Object.assign(new Error('Unsupported Media Type'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 });

/**
 * A form body, for the routes that declare `@RouteConfig({ formBody: true })` (the social-login
 * POST, which djoser clients send as a form); every other route answers it with 415. A repeated
 * field becomes a list, which the DTO then refuses.
 */
function parseForm(request: FastifyRequest, body: string | Buffer, done: (error: Error | null, value?: unknown) => void): void {
  if ((request.routeOptions.config as { formBody?: boolean } | undefined)?.formBody !== true) return done(unsupportedMediaType());
  const value: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [name, text] of new URLSearchParams(body.toString())) {
    const previous = value[name];
    value[name] = previous === undefined ? text : [...(Array.isArray(previous) ? previous : [previous]), text];
  }
  try {
    checkJsonStrings(value);
  } catch (error) {
    return done(error as Error);
  }
  done(null, { ...value });
}

/** SPEC section 8: bodies over 1 MiB → 413. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * JSON is the only body the API takes (SPEC section 5): Fastify's text/plain parser is removed
 * so any other content type is a 415. An empty JSON body reads as no body (so a bodyless POST
 * such as logout works with any client), and `__proto__`/`constructor` keys are refused so a
 * body cannot pollute prototypes further down. Depth, key count and unstorable strings are
 * checked here, before the validation pipe sees the body (see json-limits.ts).
 */
export function registerJsonBodyParser(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  const parse = (_request: unknown, body: string | Buffer, done: (error: Error | null, value?: unknown) => void) => {
    const text = body.toString();
    if (text.trim() === '') return done(null, undefined);
    let value: unknown;
    try {
      checkJsonText(text);
      value = secureJsonParse.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
      checkJsonStrings(value);
    } catch (error) {
      return done(error instanceof ApiError ? error : new ApiError(400, 'parse_error', 'Malformed JSON in the request body.'), undefined);
    }
    done(null, value);
  };
  fastify.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES }, parse);
  fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES }, parseForm);
  fastify.addContentTypeParser(/^application\/[\w.+-]+\+json$/, { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES }, parse);
}
