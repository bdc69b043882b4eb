import { matchesHash } from '../common/crypto/secret-hash.js';
import { generateMcpToken, mcpTokenPrefix } from './mcp-token-format.js';

describe('MCP token format', () => {
  it('generates mcp_<prefix>_<secret> whose hash is the SHA-256 of the whole token', () => {
    const { token, prefix, hash } = generateMcpToken();
    expect(token).toMatch(/^mcp_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
    expect(mcpTokenPrefix(token)).toBe(prefix);
    expect(matchesHash(token, hash)).toBe(true);
    expect(matchesHash(`${token.slice(0, -1)}x`, hash)).toBe(false);
  });

  it('refuses anything else, JWTs and API keys included', () => {
    const { token } = generateMcpToken();
    for (const bad of [
      '',
      'mcp_',
      `${token}x`,
      token.replace('mcp_', 'MCP_'),
      'eyJhbGciOiJIUzI1NiJ9.e30.sig',
      'abcdefghijkl.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    ]) {
      expect(mcpTokenPrefix(bad)).toBeUndefined();
    }
  });
});
