/**
 * The one door to the service. The access token lives in this module's memory only; the refresh
 * token is in an HttpOnly cookie that only /app/session/ ever sees (docs/architecture.md). A call
 * that finds its access token expired renews it once through that cookie and is retried.
 */

/** An RFC 9457 problem as the service answers it (SPEC section 5), or a network failure (status 0). */
export interface Problem {
  status: number;
  code: string;
  detail: string;
  errors?: Record<string, string[]>;
  request_id?: string;
}

export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail);
  }
}

const SESSION_HEADERS = { 'x-requested-with': 'fetch' };

let accessToken: string | null = null;
let renewing: Promise<boolean> | null = null;
const signedOutListeners = new Set<() => void>();

/** Called when the session ends underneath the page (expired, signed out in another tab). */
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

export function isSignedIn(): boolean {
  return accessToken !== null;
}

async function send(path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(path, { credentials: 'same-origin', ...init });
  } catch {
    throw new ProblemError({
      status: 0,
      code: 'network_error',
      detail: 'The service could not be reached. Check your connection and try again.',
    });
  }
}

async function problemOf(response: Response): Promise<Problem> {
  try {
    const body = (await response.json()) as Partial<Problem>;
    return {
      status: response.status,
      code: body.code ?? 'error',
      detail: body.detail ?? response.statusText,
      errors: body.errors,
      request_id: body.request_id,
    };
  } catch {
    return { status: response.status, code: 'error', detail: `The service answered ${response.status}.` };
  }
}

async function sessionCall(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<void> {
  const response = await send(`/app/session/${path}`, {
    method: 'POST',
    headers: { ...SESSION_HEADERS, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new ProblemError(await problemOf(response));
  if (response.status !== 204) accessToken = ((await response.json()) as { access: string }).access;
}

export async function signIn(email: string, password: string): Promise<void> {
  await sessionCall('login', { email, password });
}

/**
 * Finishes a social sign-in, or links the provider account to the signed-in user when `link`:
 * then the call carries the current access token, as the service requires.
 */
export async function finishSocialSignIn(provider: string, callback: Record<string, string>, link: boolean): Promise<void> {
  const headers: Record<string, string> = link && accessToken ? { authorization: `Bearer ${accessToken}` } : {};
  await sessionCall(`social/${encodeURIComponent(provider)}`, callback, headers);
}

/** Ends the session at the service; only then is this page signed out (a failure throws and changes nothing). */
export async function signOut(): Promise<void> {
  await sessionCall('logout');
  accessToken = null;
}

/**
 * A new access token from the session cookie. One renewal at a time, across tabs too (Web Locks):
 * two tabs spending the same refresh token at once would look like theft and end the session.
 */
export function renewSession(): Promise<boolean> {
  renewing ??= (async () => {
    const renew = async () => {
      try {
        await sessionCall('refresh');
        return true;
      } catch (error) {
        if (error instanceof ProblemError && error.problem.status === 401) {
          accessToken = null;
          return false;
        }
        throw error;
      }
    };
    try {
      return navigator.locks ? await navigator.locks.request('audience-session-renewal', renew) : await renew();
    } finally {
      renewing = null;
    }
  })();
  return renewing;
}

/**
 * A call with the access token that renews it once on a 401; a second 401 ends the session here.
 * The body is sent as it is, so a File goes out as a stream of its bytes, never read into a string.
 */
async function authorized(method: string, path: string, headers: Record<string, string>, body?: BodyInit): Promise<Response> {
  const call = () =>
    send(path, {
      method,
      headers: { accept: 'application/json', ...(accessToken ? { authorization: `Bearer ${accessToken}` } : {}), ...headers },
      body,
    });
  let response = await call();
  if (response.status === 401) {
    if (await renewSession()) response = await call();
    if (response.status === 401) {
      accessToken = null;
      for (const listener of signedOutListeners) listener();
    }
  }
  if (!response.ok) throw new ProblemError(await problemOf(response));
  return response;
}

/** A JSON call to the API with the access token; 204 answers undefined. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await authorized(
    method,
    path,
    body === undefined ? {} : { 'content-type': 'application/json' },
    body === undefined ? undefined : JSON.stringify(body),
  );
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** POSTs a file (a Blob, as a file input gives) as the request body under its own content type; answers the JSON reply. */
export async function upload<T>(path: string, file: Blob, contentType: string): Promise<T> {
  const response = await authorized('POST', path, { 'content-type': contentType }, file);
  return (await response.json()) as T;
}

/** A query string from the non-empty values of `params`. */
export function queryOf(params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') query.set(name, String(value));
  const text = query.toString();
  return text ? `?${text}` : '';
}
