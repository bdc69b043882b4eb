import { randomPrefix, randomSecret, sha256 } from '../common/crypto/secret-hash.js';

/**
 * `mcp_<prefix>_<secret>` (SPEC section 2): the `mcp_` tag tells it apart from a JWT at a glance,
 * the 12-character prefix finds the row, the secret is 32 random bytes in base64url.
 */
const TOKEN = /^mcp_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

export function generateMcpToken(): { token: string; prefix: string; hash: Buffer } {
  const prefix = randomPrefix(12);
  const token = `mcp_${prefix}_${randomSecret()}`;
  return { token, prefix, hash: sha256(token) };
}

export function mcpTokenPrefix(token: string): string | undefined {
  return TOKEN.exec(token)?.[1];
}
