import { isWellFormedHost } from './host-header.js';

describe('the Host header (RFC 9110 section 7.2)', () => {
  it.each([
    'localhost',
    'localhost:3000',
    'api.example.com',
    '127.0.0.1:80',
    '[::1]',
    '[::1]:3000',
    'xn--bcher-kva.example',
    'a%2Db.example',
  ])('takes %s', (host) => expect(isWellFormedHost(host)).toBe(true));

  it.each([
    '127.0.0.1:80@evil.example',
    'user@api.example.com',
    'api.example.com/path',
    'api.example.com:80:81',
    'a b',
    '[::1',
    'host:123456',
    '%zz',
    'évil.example',
  ])('refuses %s', (host) => expect(isWellFormedHost(host)).toBe(false));

  it('is linear in its input: a 100,000-character near miss is answered at once', () => {
    expect(isWellFormedHost(`${'a'.repeat(100_000)}@`)).toBe(false);
    expect(isWellFormedHost(`${'%a'.repeat(50_000)}`)).toBe(false);
  });
});
