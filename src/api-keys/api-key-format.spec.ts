import { apiKeyMatches, generateApiKey, hashApiKey, prefixOf } from './api-key-format.js';

describe('API key format', () => {
  it('generates <prefix>.<secret> keys whose hash is the SHA-256 of the whole key', () => {
    const { key, prefix, hash } = generateApiKey();
    expect(key).toMatch(/^[a-z0-9]{12}\.[A-Za-z0-9_-]{43}$/);
    expect(key.startsWith(`${prefix}.`)).toBe(true);
    expect(hash.equals(hashApiKey(key))).toBe(true);
    expect(hash).toHaveLength(32);
  });

  it('generates a different key every time', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateApiKey().key));
    const prefixes = new Set([...keys].map((key) => key.slice(0, 12)));
    expect(keys.size).toBe(200);
    expect(prefixes.size).toBe(200);
  });

  it('reads the prefix of well-formed keys only', () => {
    const { key, prefix } = generateApiKey();
    expect(prefixOf(key)).toBe(prefix);
    for (const bad of [
      '',
      'abc',
      `${prefix}`,
      `${prefix}.`,
      `${prefix}.short`,
      `${prefix.toUpperCase()}${key.slice(12)}`,
      `${key}x`,
      `${key} `,
    ]) {
      expect(prefixOf(bad)).toBeUndefined();
    }
  });

  it('matches the right key and nothing else', () => {
    const { key, hash } = generateApiKey();
    expect(apiKeyMatches(key, hash)).toBe(true);
    const tampered = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    expect(apiKeyMatches(tampered, hash)).toBe(false);
    expect(apiKeyMatches(key, Buffer.alloc(0))).toBe(false);
    expect(apiKeyMatches(key, generateApiKey().hash)).toBe(false);
  });
});
