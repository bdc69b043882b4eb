import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import Provider from 'oidc-provider';

export interface OidcAccount {
  email: string;
  email_verified: boolean;
}

/** Rewrites the ID token of the next token responses: new claims, and the key to sign them with. */
export type IdTokenTamper = (claims: JWTPayload) => { claims: JWTPayload; foreignKey?: boolean };

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, OidcAccount>;
  /** Set to change the ID tokens the token endpoint returns; undefined to stop. */
  tamper: IdTokenTamper | undefined;
  close(): Promise<void>;
}

const KID = 'test-signing-key';

/**
 * A real OpenID provider (node-oidc-provider) on loopback with keys of its own, playing Google in
 * the tests: discovery, authorization endpoint with PKCE required, token endpoint, JWKS. Its
 * development interactions (login and consent forms) are driven over HTTP by test/support/browser.ts.
 * The ID token can be rewritten on its way out, re-signed with the provider's real key (to test
 * `aud`, `nonce`) or with another key of the same `kid` (to test the signature check).
 */
export async function startOidcProvider(redirectUris: string[]): Promise<TestOidcProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const foreign = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: KID, alg: 'RS256', use: 'sig' };
  const accounts = new Map<string, OidcAccount>();
  const state: TestOidcProvider = {
    issuer,
    clientId: 'audience-platform-test',
    clientSecret: 'a-client-secret-for-the-test-provider',
    accounts,
    tamper: undefined,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: state.clientId,
        client_secret: state.clientSecret,
        redirect_uris: redirectUris,
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [jwk] },
    pkce: { required: () => true },
    // Google puts the email claims in the ID token; by default oidc-provider keeps them for userinfo.
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    findAccount: (_context, sub) => {
      const account = accounts.get(sub);
      return account ? { accountId: sub, claims: () => ({ sub, ...account }) } : undefined;
    },
    ttl: { AuthorizationCode: 60, Interaction: 600, Session: 600, Grant: 600, AccessToken: 600, IdToken: 600 },
    cookies: { keys: ['a-cookie-signing-key-for-the-test-provider'] },
    features: { devInteractions: { enabled: true } },
  });
  const handle = provider.callback();

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const tamper = state.tamper;
    if (tamper && request.method === 'POST' && request.url?.startsWith('/token')) {
      rewriteJson(response, async (body) => {
        if (typeof body.id_token !== 'string') return body;
        const { claims, foreignKey } = tamper(decodeJwt(body.id_token));
        const header = decodeProtectedHeader(body.id_token);
        const signed = await new SignJWT(claims)
          .setProtectedHeader({ alg: header.alg ?? 'RS256', kid: KID })
          .sign(foreignKey ? foreign.privateKey : privateKey);
        return { ...body, id_token: signed };
      });
    }
    void handle(request, response);
  });
  return state;
}

/** Holds back a JSON response, rewrites it, then sends it with the right length. */
function rewriteJson(response: ServerResponse, rewrite: (body: Record<string, unknown>) => Promise<Record<string, unknown>>): void {
  const end = response.end.bind(response) as (chunk?: unknown) => ServerResponse;
  response.end = ((chunk?: unknown) => {
    if (response.statusCode !== 200 || chunk === undefined) return end(chunk);
    void rewrite(JSON.parse(String(chunk)) as Record<string, unknown>).then((body) => {
      const text = JSON.stringify(body);
      response.setHeader('content-length', Buffer.byteLength(text));
      end(text);
    });
    return response;
  }) as typeof response.end;
}
