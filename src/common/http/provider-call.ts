import { discardBody } from './discard-body.js';

/** A provider (Google, Meta) that did not answer in time, or answered with a server error: try again later. */
export class ProviderUnreachableError extends Error {
  constructor(
    readonly label: string,
    reason: string,
    /** The 5xx status, or undefined when there was no answer (network failure, time-out). */
    readonly status?: number,
    /** The answer's `Retry-After`, in seconds, when it gave one (a 503 may). */
    readonly retryAfterSeconds?: number,
  ) {
    super(`${label} ${reason}.`);
    this.name = 'ProviderUnreachableError';
  }
}

/** Longest wait a `Retry-After` may ask for: a day; anything longer is read as a day. */
const MAX_RETRY_AFTER_SECONDS = 86_400;

/**
 * A `Retry-After` header in seconds (RFC 9110 section 10.2.3: delay-seconds or an HTTP date), or
 * undefined when absent or unreadable. A date in the past is 0.
 */
export function retryAfterSeconds(header: string | null, now: number = Date.now()): number | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  if (/^\d{1,10}$/.test(value)) return Math.min(Number(value), MAX_RETRY_AFTER_SECONDS);
  // An HTTP date names its day (`Fri, 01 May 2026 …`); Date.parse would also take `-5` as a year.
  if (!/^[A-Za-z]{3}, /.test(value)) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, Math.ceil((at - now) / 1000)), MAX_RETRY_AFTER_SECONDS);
}

/**
 * One call to an identity or ad provider, with a time limit and no redirects (a redirect would
 * resend a token elsewhere). A network failure, a time-out (also while reading the body) or a 5xx
 * throws ProviderUnreachableError (with the status and `Retry-After` of a 5xx); otherwise the
 * status, the answer's headers and the parsed JSON body (undefined when it is not JSON) are
 * returned for the caller to judge. The URL may carry a secret: it is never put in an error.
 */
export async function providerCall(
  url: URL,
  init: RequestInit,
  timeoutMs: number,
  label: string,
): Promise<{ status: number; body: unknown; headers: Headers }> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  } catch {
    throw new ProviderUnreachableError(label, 'could not be reached');
  }
  if (response.status >= 500) {
    await discardBody(response);
    throw new ProviderUnreachableError(
      label,
      `answered ${response.status}`,
      response.status,
      retryAfterSeconds(response.headers.get('retry-after')),
    );
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch (error) {
    const name = (error as { name?: unknown } | null)?.name;
    if (name === 'TimeoutError' || name === 'AbortError') throw new ProviderUnreachableError(label, 'answered too slowly');
    body = undefined;
  }
  return { status: response.status, body, headers: response.headers };
}

/** The value when it is a JSON object, else an empty one: for reading provider answers field by field. */
export const objectOf = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
