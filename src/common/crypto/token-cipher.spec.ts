import { createHash } from 'node:crypto';
import { keyIdOf, TokenCipher, TokenDecryptionError } from './token-cipher.js';

const OLD_KEY = Buffer.alloc(32, 1);
const NEW_KEY = Buffer.alloc(32, 2);
const TOKEN = 'ya29.a0AfH6SMB-secret-access-token';

describe('TokenCipher', () => {
  it('decrypts what it encrypted', () => {
    const cipher = new TokenCipher(NEW_KEY);
    expect(cipher.decrypt(cipher.encrypt(TOKEN))).toBe(TOKEN);
    expect(cipher.decrypt(cipher.encrypt(''))).toBe('');
    expect(cipher.decrypt(cipher.encrypt('ünïcødé ✓'))).toBe('ünïcødé ✓');
  });

  it('writes version, key id, nonce, tag and ciphertext, and no plaintext', () => {
    const data = new TokenCipher(NEW_KEY).encrypt(TOKEN);
    expect(data[0]).toBe(1);
    expect(data.subarray(1, 9).equals(createHash('sha256').update(NEW_KEY).digest().subarray(0, 8))).toBe(true);
    expect(data.subarray(1, 9).equals(keyIdOf(NEW_KEY))).toBe(true);
    expect(data).toHaveLength(1 + 8 + 12 + 16 + Buffer.byteLength(TOKEN));
    expect(data.includes(Buffer.from(TOKEN))).toBe(false);
  });

  it('gives a different ciphertext (and nonce) every time for the same plaintext', () => {
    const cipher = new TokenCipher(NEW_KEY);
    const [a, b] = [cipher.encrypt(TOKEN), cipher.encrypt(TOKEN)];
    expect(a.equals(b)).toBe(false);
    expect(a.subarray(9, 21).equals(b.subarray(9, 21))).toBe(false);
  });

  it.each([
    ['the ciphertext', (data: Buffer) => (data[data.length - 1]! ^= 1)],
    ['the auth tag', (data: Buffer) => (data[21 + 3]! ^= 1)],
    ['the nonce', (data: Buffer) => (data[9 + 5]! ^= 1)],
  ])('detects a change to %s', (_part, tamper) => {
    const cipher = new TokenCipher(NEW_KEY);
    const data = Buffer.from(cipher.encrypt(TOKEN));
    tamper(data);
    expect(() => cipher.decrypt(data)).toThrow(TokenDecryptionError);
  });

  it('refuses a truncated buffer and an unknown format version', () => {
    const cipher = new TokenCipher(NEW_KEY);
    const data = Buffer.from(cipher.encrypt(TOKEN));
    expect(() => cipher.decrypt(data.subarray(0, 30))).toThrow(/too short/);
    data[0] = 2;
    expect(() => cipher.decrypt(data)).toThrow(/unknown format version/);
  });

  it('still decrypts under a previous key after a rotation, and encrypts under the new one', () => {
    const before = new TokenCipher(OLD_KEY).encrypt(TOKEN);
    const rotated = new TokenCipher(NEW_KEY, [OLD_KEY]);
    expect(rotated.decrypt(before)).toBe(TOKEN);
    expect(rotated.encrypt(TOKEN).subarray(1, 9).equals(keyIdOf(NEW_KEY))).toBe(true);
  });

  it('refuses data encrypted under a key it does not know, without revealing anything', () => {
    const foreign = new TokenCipher(OLD_KEY).encrypt(TOKEN);
    const error = (() => {
      try {
        new TokenCipher(NEW_KEY).decrypt(foreign);
      } catch (caught) {
        return caught as Error;
      }
      throw new Error('expected decrypt to throw');
    })();
    expect(error).toBeInstanceOf(TokenDecryptionError);
    expect(error.message).toMatch(/not configured/);
    expect(error.message).not.toContain(TOKEN);
  });

  it('cannot be moved to another key id by rewriting the header', () => {
    const cipher = new TokenCipher(NEW_KEY, [OLD_KEY]);
    const data = Buffer.from(cipher.encrypt(TOKEN));
    keyIdOf(OLD_KEY).copy(data, 1);
    expect(() => cipher.decrypt(data)).toThrow(TokenDecryptionError);
  });

  it('refuses keys that are not 32 bytes', () => {
    expect(() => new TokenCipher(Buffer.alloc(16))).toThrow(/32 bytes/);
    expect(() => new TokenCipher(NEW_KEY, [Buffer.alloc(31)])).toThrow(/32 bytes/);
  });
});
