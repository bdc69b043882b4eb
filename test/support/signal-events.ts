import { randomBytes } from 'node:crypto';
import { ConnectionsRepository } from '../../src/connections/connections.repository.js';
import { TokenCipher } from '../../src/connections/token-cipher.js';
import { inWorkspace, type Workspace } from './factories.js';
import type { TestApp } from './test-app.js';

/**
 * A connection that holds a live access token from a fake platform (test/support/fake-ad-platforms.ts),
 * as the OAuth flow would have stored it: encrypted, with no expiry, so the delivery uses it as is.
 */
export async function createTokenConnection(
  api: TestApp,
  workspace: Workspace,
  platform: 'google_ads' | 'meta_ads',
  accessToken: string,
  externalAccountId = String(1_000_000_000 + randomBytes(3).readUIntBE(0, 3)),
): Promise<{ id: number; externalAccountId: string }> {
  const cipher = api.app.get(TokenCipher);
  const connection = await inWorkspace(
    api,
    workspace.customerId,
    (connections) =>
      connections.insertWithTokens(
        {
          platform,
          externalAccountId,
          accountName: `Account ${externalAccountId}`,
          status: 'active',
          scopes:
            platform === 'google_ads'
              ? ['https://www.googleapis.com/auth/adwords', 'https://www.googleapis.com/auth/datamanager']
              : ['ads_management', 'ads_read'],
        },
        { accessToken: cipher.encrypt(accessToken), refreshToken: null },
      ),
    ConnectionsRepository,
  );
  return { id: connection.id, externalAccountId };
}

/** Polls `read` every 100 ms until `done` holds (or 30 s pass, then throws with the last value). */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
