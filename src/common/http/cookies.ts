import type { FastifyRequest } from 'fastify';

/**
 * The value of the cookie `name` in the request's `Cookie` header, or undefined. Only the first
 * one counts: browsers send the cookie with the most specific path first. Callers check the
 * value's shape themselves.
 */
export function cookieOf(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return undefined;
}
