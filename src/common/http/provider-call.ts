/** A provider (Google, Meta) that did not answer in time, or answered with a server error: try again later. */
export class ProviderUnreachableError extends Error {
  constructor(
    readonly label: string,
    reason: string,
  ) {
    super(`${label} ${reason}.`);
    this.name = 'ProviderUnreachableError';
  }
}

/**
 * One call to an identity or ad provider, with a time limit and no redirects (a redirect would
 * resend a token elsewhere). A network failure, a time-out (also while reading the body) or a 5xx
 * throws ProviderUnreachableError; otherwise the status and the parsed JSON body (undefined when
 * it is not JSON) are returned for the caller to judge. The URL may carry a secret: it is never
 * put in an error.
 */
export async function providerCall(
  url: URL,
  init: RequestInit,
  timeoutMs: number,
  label: string,
): Promise<{ status: number; body: unknown }> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  } catch {
    throw new ProviderUnreachableError(label, 'could not be reached');
  }
  if (response.status >= 500) {
    await response.body?.cancel();
    throw new ProviderUnreachableError(label, `answered ${response.status}`);
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch (error) {
    const name = (error as { name?: unknown } | null)?.name;
    if (name === 'TimeoutError' || name === 'AbortError') throw new ProviderUnreachableError(label, 'answered too slowly');
    body = undefined;
  }
  return { status: response.status, body };
}

/** The value when it is a JSON object, else an empty one: for reading provider answers field by field. */
export const objectOf = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
