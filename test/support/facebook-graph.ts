import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FacebookUser {
  id: string;
  email?: string;
}

export interface FakeFacebook {
  /** Base URL for both FACEBOOK_DIALOG_URL and FACEBOOK_GRAPH_URL. */
  url: string;
  appId: string;
  appSecret: string;
  /** Who is signed in at "Facebook" when the dialog is opened, or 'deny' to refuse consent. */
  signedIn: FacebookUser | 'deny';
  /** Answer every Graph call with a 500 while set. */
  failing: boolean;
  /** Graph calls seen, without their secrets. */
  calls: string[];
  close(): Promise<void>;
}

const VERSION = 'v25.0';

/**
 * A local server speaking the part of Facebook's contract that login uses: the OAuth dialog (which
 * redirects straight back, as for a user already signed in who accepts or refuses), Graph's
 * `oauth/access_token` (client secret, redirect URI and PKCE verifier checked, codes single use)
 * and `me` (an `appsecret_proof` that does not match the token is refused, as Graph does).
 * Errors have Graph's shape: `{error: {message, type, code, fbtrace_id}}`.
 */
export async function startFakeFacebook(): Promise<FakeFacebook> {
  const codes = new Map<string, { user: FacebookUser; redirectUri: string; challenge: string }>();
  const tokens = new Map<string, FacebookUser>();
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const query = url.searchParams;
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(JSON.stringify(body));
    };
    const graphError = (message: string, type = 'OAuthException', code = 100) =>
      send(400, { error: { message, type, code, fbtrace_id: randomBytes(8).toString('hex') } });

    if (url.pathname === `/${VERSION}/dialog/oauth`) {
      const redirect = new URL(query.get('redirect_uri') ?? '');
      redirect.searchParams.set('state', query.get('state') ?? '');
      if (fake.signedIn === 'deny') {
        redirect.searchParams.set('error', 'access_denied');
        redirect.searchParams.set('error_code', '200');
        redirect.searchParams.set('error_description', 'Permissions error');
        redirect.searchParams.set('error_reason', 'user_denied');
      } else {
        const code = randomBytes(24).toString('base64url');
        codes.set(code, {
          user: fake.signedIn,
          redirectUri: query.get('redirect_uri') ?? '',
          challenge: query.get('code_challenge') ?? '',
        });
        redirect.searchParams.set('code', code);
      }
      response.writeHead(302, { location: `${redirect.href}#_=_` });
      response.end();
      return;
    }
    fake.calls.push(url.pathname);
    if (fake.failing) return send(500, { error: { message: 'An unexpected error has occurred.', type: 'OAuthException', code: 2 } });

    if (url.pathname === `/${VERSION}/oauth/access_token`) {
      if (query.get('client_id') !== fake.appId || query.get('client_secret') !== fake.appSecret)
        return graphError('Error validating client secret.', 'OAuthException', 1);
      const grant = codes.get(query.get('code') ?? '');
      if (!grant) return graphError('Invalid verification code format.');
      codes.delete(query.get('code') ?? '');
      if (grant.redirectUri !== query.get('redirect_uri'))
        return graphError(
          'Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request',
        );
      const verifier = query.get('code_verifier') ?? '';
      if (createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) return graphError('Invalid code verifier.');
      const token = `EAAB${randomBytes(30).toString('hex')}`;
      tokens.set(token, grant.user);
      return send(200, { access_token: token, token_type: 'bearer', expires_in: 5183944 });
    }
    if (url.pathname === `/${VERSION}/me`) {
      const token = query.get('access_token') ?? '';
      const user = tokens.get(token);
      if (!user) return graphError('Invalid OAuth access token - Cannot parse access token', 'OAuthException', 190);
      const proof = createHmac('sha256', fake.appSecret).update(token).digest('hex');
      if (query.get('appsecret_proof') !== proof)
        return graphError('Invalid appsecret_proof provided in the API argument', 'GraphMethodException');
      const fields = (query.get('fields') ?? 'id,name').split(',');
      return send(
        200,
        Object.fromEntries(fields.filter((field) => field in user).map((field) => [field, user[field as keyof FacebookUser]])),
      );
    }
    graphError('Unknown path components', 'OAuthException', 2500);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const fake: FakeFacebook = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    appId: '1234567890123456',
    appSecret: 'a-facebook-app-secret-for-tests',
    signedIn: 'deny',
    failing: false,
    calls: [],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return fake;
}
