import type { FastifyInstance } from 'fastify';

/**
 * Headers every API response carries (SPEC section 9): no MIME sniffing, and a content security
 * policy that lets a JSON answer do nothing if a browser is ever tricked into rendering it. API
 * answers under /api/v1/, /mcp and the web interface's /app/session/ are per caller, so no cache may keep them (token responses
 * included, as RFC 6749 asks). Swagger UI and the API document keep their own caching and
 * policy: they are public, and Swagger UI is a page with scripts of its own.
 */
const EVERY_RESPONSE = { 'x-content-type-options': 'nosniff' } as const;
const API_RESPONSE = {
  ...EVERY_RESPONSE,
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'cache-control': 'no-store',
} as const;

const PERSONAL_PREFIXES = ['/api/v1/', '/mcp', '/app/session/'];

/** The security headers of a response to `url`. Also used where Fastify answers before any hook runs (router errors). */
export function securityHeadersFor(url: string): Readonly<Record<string, string>> {
  return PERSONAL_PREFIXES.some((prefix) => url.startsWith(prefix)) ? API_RESPONSE : EVERY_RESPONSE;
}

export function registerSecurityHeaders(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.headers(securityHeadersFor(request.url));
    done();
  });
}
