import { checkWebhookUrl, parseWebhookUrl, refusedAddressReason, WebhookUrlRefusedError } from './webhook-url-guard.js';

const PRODUCTION = { production: true };
const DEVELOPMENT = { production: false };

describe('webhook URL guard (SSRF)', () => {
  it.each([
    ['127.0.0.1', /loopback/],
    ['10.20.30.40', /private/],
    ['172.31.255.255', /private/],
    ['192.168.0.1', /private/],
    ['100.127.0.1', /carrier-grade NAT/],
    ['169.254.169.254', /link-local/],
    ['0.0.0.0', /unspecified/],
    ['224.0.0.251', /multicast/],
    ['::1', /loopback/],
    ['::', /unspecified/],
    ['fe80::1', /link-local/],
    ['fc00::1', /unique local/],
    ['fdff::1', /unique local/],
    ['ff02::1', /multicast/],
    ['::ffff:127.0.0.1', /loopback/],
    ['::ffff:169.254.169.254', /link-local/],
    ['64:ff9b::7f00:1', /NAT64/],
    ['2002:7f00:1::', /6to4/],
  ])('refuses %s', (address, reason) => {
    expect(refusedAddressReason(address)).toMatch(reason);
  });

  it('lets ordinary public addresses through', () => {
    for (const address of ['1.1.1.1', '93.184.215.14', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(refusedAddressReason(address)).toBeUndefined();
  });

  it('takes https only in production, http too outside it, and never credentials or a fragment', () => {
    expect(() => parseWebhookUrl('http://hooks.example.com/', PRODUCTION)).toThrow(/https/);
    expect(parseWebhookUrl('http://localhost:8080/hook', DEVELOPMENT).port).toBe('8080');
    expect(() => parseWebhookUrl('https://user:pass@hooks.example.com/', PRODUCTION)).toThrow(/user name or password/);
    expect(() => parseWebhookUrl('https://hooks.example.com/#x', PRODUCTION)).toThrow(/fragment/);
    expect(() => parseWebhookUrl('hooks.example.com', PRODUCTION)).toThrow(WebhookUrlRefusedError);
  });

  it('refuses a name if any address it resolves to is refused, and one that does not resolve', async () => {
    await expect(checkWebhookUrl('https://mixed.invalid/', PRODUCTION, async () => ['1.1.1.1', '10.0.0.1'])).rejects.toThrow(
      /resolves to 10\.0\.0\.1, which is a private address/,
    );
    await expect(
      checkWebhookUrl('https://gone.invalid/', PRODUCTION, async () => {
        throw new Error('ENOTFOUND');
      }),
    ).rejects.toThrow(/could not be resolved/);
    await expect(checkWebhookUrl('https://public.invalid/', PRODUCTION, async () => ['1.1.1.1'])).resolves.toBeInstanceOf(URL);
    // Outside production nothing is resolved at all.
    await expect(checkWebhookUrl('http://anything.invalid/', DEVELOPMENT, async () => ['127.0.0.1'])).resolves.toBeInstanceOf(URL);
  });
});
