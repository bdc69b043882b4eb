import { ApiError } from '../../common/errors/api-error.js';
import { DEPENDENCY_RETRY_AFTER_SECONDS } from '../../common/errors/database-errors.js';

/** What a provider says about the person who signed in. */
export interface ProviderIdentity {
  /** Stable per person and app: Google's `sub`, Facebook's app-scoped user id. */
  subject: string;
  email: string | null;
  /** Whether the provider vouches that the person controls `email` (Google's `email_verified`). */
  emailVerified: boolean;
}

export interface AuthorizationRequest {
  redirectUri: string;
  state: string;
  /** PKCE S256 challenge of the verifier kept in the state row. */
  codeChallenge: string;
  nonce: string;
}

export interface CodeExchange {
  code: string;
  state: string;
  /** The `iss` the client passed on from the callback, or undefined. */
  iss: string | undefined;
  redirectUri: string;
  codeVerifier: string;
  nonce: string;
}

/** One identity provider: where to send the browser, and who came back with a code. */
export interface SocialProvider {
  /** Its key in the registry (social-providers.ts), stored with each state and linked identity. */
  readonly name: string;
  /** For messages: "Google", "Facebook". */
  readonly label: string;
  authorizationUrl(request: AuthorizationRequest): Promise<URL>;
  /**
   * Exchanges the code and verifies what comes back. Throws an ApiError: 400 when the provider
   * refuses the code, 401 when its answer fails verification, 503 when it cannot be reached.
   */
  identify(exchange: CodeExchange): Promise<ProviderIdentity>;
  /** Whether a first login may be matched to a user by this identity's email. */
  trustsEmail(identity: ProviderIdentity): boolean;
  /**
   * The answer to a first login whose email this provider does not vouch for, when it has one more
   * telling than the generic login failure (which stays the answer when this is absent or undefined).
   */
  untrustedEmailRefusal?(identity: ProviderIdentity): ApiError | undefined;
}

/** The provider did not answer, answered too slowly or with a server error: try again later (SPEC section 8). */
export function providerUnavailable(label: string): ApiError {
  return new ApiError(503, 'service_unavailable', `${label} could not be reached. Try again shortly.`, undefined, {
    'retry-after': String(DEPENDENCY_RETRY_AFTER_SECONDS),
  });
}

/** The provider refused the authorization code (used, expired, for another client): start again. */
export function codeRefused(label: string, reason: string): ApiError {
  return ApiError.field('code', `${label} refused the authorization code (${reason.slice(0, 200)}); start the login again.`);
}

/** The provider's answer failed verification: nobody is signed in. */
export function verificationFailed(label: string, what: string): ApiError {
  return new ApiError(401, 'authentication_failed', `The answer from ${label} failed verification: ${what}.`, undefined, {
    'www-authenticate': 'Bearer realm="api"',
  });
}

/** True for fetch's network failures and time-outs. */
export function isNetworkFailure(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return error instanceof TypeError || name === 'TimeoutError' || name === 'AbortError';
}
