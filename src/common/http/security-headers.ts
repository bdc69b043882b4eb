import type { FastifyInstance } from 'fastify';

/**
 * Headers every response carries (SPEC section 9): no MIME sniffing, and, on everything that is
 * not a page, a content security policy that lets an answer do nothing if a browser is ever
 * tricked into rendering it, and no caching: API answers are per caller (token responses
 * included, as RFC 6749 asks), and the rest (unknown paths, health, the API document) gains
 * nothing from a cache. The two pages set policies that let them run: Swagger UI its own below
 * (its scripts and styles, nothing from elsewhere, no framing), the web interface's pages theirs
 * (src/web/web-app.ts).
 */
const EVERY_RESPONSE = { 'x-content-type-options': 'nosniff' } as const;
const API_RESPONSE = {
  ...EVERY_RESPONSE,
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'cache-control': 'no-store',
} as const;
/** Swagger UI: its own files, its inline style block, data: icons, calls to this origin only; never in a frame. */
const DOCS_PAGE = {
  ...EVERY_RESPONSE,
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
} as const;

/** The security headers of a response to `url`. Also used where Fastify answers before any hook runs (router errors). */
export function securityHeadersFor(url: string): Readonly<Record<string, string>> {
  if (url.startsWith('/api/docs/') || url === '/api/docs') return DOCS_PAGE;
  if ((url.startsWith('/app/') && !url.startsWith('/app/session/')) || url === '/app') return EVERY_RESPONSE;
  return API_RESPONSE;
}

export function registerSecurityHeaders(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.headers(securityHeadersFor(request.url));
    done();
  });
}
