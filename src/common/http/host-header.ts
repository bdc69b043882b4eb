import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors/api-error.js';

/**
 * RFC 9110 section 7.2: `Host = uri-host [ ":" port ]`, where uri-host (RFC 3986) is an IP literal
 * in brackets, an IPv4 address or a reg-name of unreserved characters, percent-encodings and
 * sub-delimiters. Nothing else: `127.0.0.1:80@evil.example` has an `@`, which only a URL's
 * authority (with userinfo) may carry, and a parser that took what follows it as the host put
 * evil.example into `next` links and OAuth redirects. One pass, no backtracking: each character
 * matches exactly one branch.
 */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+)(?::[0-9]{0,5})?$/;

export function isWellFormedHost(value: string): boolean {
  return HOST.test(value);
}

/**
 * Refuses a request whose Host (or, from a trusted proxy, X-Forwarded-Host) is not a host and an
 * optional port with 400 before anything reads it: links, redirects and ALLOWED_HOSTS all take the
 * host from there.
 */
export function registerHostCheck(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    const host = request.host;
    if (host !== undefined && host !== '' && !isWellFormedHost(host)) {
      return done(ApiError.field('host', 'Host must be a host name or address with an optional port (RFC 9110).'));
    }
    done();
  });
}
