import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../common/errors/api-error.js';
import { cookieOf } from '../common/http/cookies.js';

/**
 * The web interface's refresh token lives in this cookie and nowhere JavaScript can read:
 * HttpOnly, SameSite=Strict (never sent on a cross-site request), scoped to the session endpoints,
 * and Secure when the service is reached over https.
 */
export const SESSION_COOKIE = 'audience_session';
export const SESSION_PATH = '/app/session/';

/** The header every state-changing call to the session endpoints must carry; a cross-site form cannot set one. */
export const SESSION_HEADER = 'x-requested-with';

/** The refresh token in the request's session cookie, if it carries one that looks like a JWT. */
export function sessionCookieOf(request: FastifyRequest): string | undefined {
  const value = cookieOf(request, SESSION_COOKIE);
  return value !== undefined && /^[A-Za-z0-9_.-]{1,4096}$/.test(value) ? value : undefined;
}

export function setSessionCookie(reply: FastifyReply, refresh: string, maxAgeSeconds: number, secure: boolean): void {
  void reply.header('set-cookie', cookie(refresh, maxAgeSeconds, secure));
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  void reply.header('set-cookie', cookie('', 0, secure));
}

function cookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; Path=${SESSION_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/**
 * Cross-site request forgery: a state-changing call must carry the custom header (a form or an
 * image tag cannot, and no CORS policy here lets another origin add it), and a browser's own
 * `Sec-Fetch-Site` must not say the call came from another site.
 */
export function assertSameOriginCall(request: FastifyRequest): void {
  const marker = request.headers[SESSION_HEADER];
  if (typeof marker !== 'string' || marker === '') throw ApiError.permissionDenied('Session calls must carry an X-Requested-With header.');
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    throw ApiError.permissionDenied('Session calls must come from the web interface’s own origin.');
}
