import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Helpers for high-entropy bearer secrets (API keys, MCP tokens). With 256 random bits a single
 * SHA-256 is the right stored form: a slow password hash buys nothing against guessing.
 */
const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A lookup id of lowercase letters and digits (about 5.2 bits each; the modulo bias is negligible for an id). */
export function randomPrefix(length: number): string {
  let prefix = '';
  for (const byte of randomBytes(length)) prefix += PREFIX_ALPHABET[byte % PREFIX_ALPHABET.length];
  return prefix;
}

/** 32 random bytes, base64url (43 characters). */
export const RANDOM_SECRET_PATTERN = '^[A-Za-z0-9_-]{43}$';

/** 32 random bytes, base64url (43 characters): RANDOM_SECRET_PATTERN. */
export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Constant-time comparison of a presented secret with a stored SHA-256. */
export function matchesHash(secret: string, storedHash: Buffer): boolean {
  const presented = sha256(secret);
  return storedHash.length === presented.length && timingSafeEqual(presented, storedHash);
}
