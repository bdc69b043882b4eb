import { matchesHash, randomPrefix, randomSecret, sha256 } from '../common/crypto/secret-hash.js';

/**
 * `<prefix>.<secret>`: the prefix (12 lowercase letters and digits) finds the row through a unique
 * index; the secret (32 random bytes, base64url) makes the key unguessable. Stored: the prefix and
 * a SHA-256 of the whole key.
 */
const KEY = /^([a-z0-9]{12})\.([A-Za-z0-9_-]{43})$/;

export interface GeneratedKey {
  key: string;
  prefix: string;
  hash: Buffer;
}

export function generateApiKey(): GeneratedKey {
  const prefix = randomPrefix(12);
  const key = `${prefix}.${randomSecret()}`;
  return { key, prefix, hash: hashApiKey(key) };
}

/** The prefix of a well-formed key, or undefined: malformed keys never reach the database. */
export function prefixOf(key: string): string | undefined {
  return KEY.exec(key)?.[1];
}

export function hashApiKey(key: string): Buffer {
  return sha256(key);
}

/** Constant-time comparison of a presented key with a stored hash. */
export function apiKeyMatches(key: string, storedHash: Buffer): boolean {
  return matchesHash(key, storedHash);
}
