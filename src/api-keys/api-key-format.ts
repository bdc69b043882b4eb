import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * `<prefix>.<secret>`: the prefix (12 lowercase letters and digits) finds the row through a unique
 * index; the secret (32 random bytes, base64url) makes the key unguessable. Keys have 256 bits of
 * entropy, so one SHA-256 of the whole key is the right hash (a slow password hash buys nothing).
 */
const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const PREFIX_LENGTH = 12;
const KEY = /^([a-z0-9]{12})\.([A-Za-z0-9_-]{43})$/;

export interface GeneratedKey {
  key: string;
  prefix: string;
  hash: Buffer;
}

export function generateApiKey(): GeneratedKey {
  const bytes = randomBytes(PREFIX_LENGTH);
  let prefix = '';
  // 256 is not a multiple of 36: the slight bias of the modulo leaves ~62 bits, plenty for a lookup id.
  for (const byte of bytes) prefix += PREFIX_ALPHABET[byte % PREFIX_ALPHABET.length];
  const key = `${prefix}.${randomBytes(32).toString('base64url')}`;
  return { key, prefix, hash: hashApiKey(key) };
}

/** The prefix of a well-formed key, or undefined: malformed keys never reach the database. */
export function prefixOf(key: string): string | undefined {
  return KEY.exec(key)?.[1];
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Constant-time comparison of a presented key with a stored hash. */
export function apiKeyMatches(key: string, storedHash: Buffer): boolean {
  const presented = hashApiKey(key);
  return storedHash.length === presented.length && timingSafeEqual(presented, storedHash);
}
