import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { AppConfig } from '../../config/app-config.js';

declare const encrypted: unique symbol;

/**
 * A ciphertext made by TokenCipher. The brand lets repository methods demand one, so a plaintext
 * token (or any other Buffer) cannot be stored in a token column by mistake.
 */
export type EncryptedToken = Buffer & { readonly [encrypted]: true };

const VERSION = 1;
const KEY_ID_BYTES = 8;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + KEY_ID_BYTES;
const MIN_BYTES = HEADER_BYTES + NONCE_BYTES + TAG_BYTES;

/** Deliberately says nothing about the data: no plaintext, key or ciphertext ever reaches a message. */
export class TokenDecryptionError extends Error {
  constructor(reason: string) {
    super(`Cannot decrypt the token: ${reason}.`);
    this.name = 'TokenDecryptionError';
  }
}

/**
 * AES-256-GCM for secrets the service must read back: OAuth tokens at rest (SPEC section 6) and
 * webhook signing secrets (SPEC 10.5). Output, self-describing so keys can rotate:
 *
 *   version (1 byte) | key id (8 bytes) | nonce (12 bytes) | auth tag (16 bytes) | ciphertext
 *
 * The key id is the first 8 bytes of SHA-256 of the key: it names the key without storing it.
 * Version and key id are authenticated as additional data, so they cannot be swapped either.
 * Encryption always uses the current key; decryption also accepts ENCRYPTION_PREVIOUS_KEYS.
 */
export class TokenCipher {
  private readonly current: { id: Buffer; key: Buffer };
  private readonly keys = new Map<string, Buffer>();

  constructor(currentKey: Buffer, previousKeys: readonly Buffer[] = []) {
    for (const key of [currentKey, ...previousKeys]) {
      if (key.length !== 32) throw new Error('AES-256-GCM keys are 32 bytes long');
      const id = keyIdOf(key).toString('hex');
      if (!this.keys.has(id)) this.keys.set(id, Buffer.from(key));
    }
    this.current = { id: keyIdOf(currentKey), key: Buffer.from(currentKey) };
  }

  static fromConfig(config: Pick<AppConfig, 'encryptionKey' | 'encryptionPreviousKeys'>): TokenCipher {
    return new TokenCipher(config.encryptionKey, config.encryptionPreviousKeys);
  }

  encrypt(plaintext: string): EncryptedToken {
    // A fresh random nonce per message: GCM's security collapses if a nonce repeats under one key.
    const nonce = randomBytes(NONCE_BYTES);
    const header = Buffer.concat([Buffer.from([VERSION]), this.current.id]);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(header);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([header, nonce, cipher.getAuthTag(), ciphertext]) as EncryptedToken;
  }

  /** Whether a ciphertext is under the current key (else `connection reencrypt` moves it). */
  isCurrent(data: Buffer): boolean {
    return data.length >= HEADER_BYTES && data[0] === VERSION && data.subarray(1, HEADER_BYTES).equals(this.current.id);
  }

  decrypt(data: Buffer): string {
    if (data.length < MIN_BYTES) throw new TokenDecryptionError('too short');
    if (data[0] !== VERSION) throw new TokenDecryptionError('unknown format version');
    const header = data.subarray(0, HEADER_BYTES);
    const key = this.keys.get(data.subarray(1, HEADER_BYTES).toString('hex'));
    if (!key) throw new TokenDecryptionError('encrypted under a key that is not configured');
    const nonce = data.subarray(HEADER_BYTES, HEADER_BYTES + NONCE_BYTES);
    const tag = data.subarray(HEADER_BYTES + NONCE_BYTES, MIN_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(header);
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(data.subarray(MIN_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new TokenDecryptionError('authentication failed (tampered or corrupted)');
    }
  }
}

/** First 8 bytes of SHA-256 of the key. */
export function keyIdOf(key: Buffer): Buffer {
  return createHash('sha256').update(key).digest().subarray(0, KEY_ID_BYTES);
}
