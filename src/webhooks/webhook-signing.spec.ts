import { createHmac } from 'node:crypto';
import { newEventId, newWebhookSecret, signDelivery } from './webhook-signing.js';

/** The specification's scheme written out with node:crypto, apart from the library that signs. */
function hmacOf(secret: string, id: string, timestamp: string, body: string): string {
  return createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64');
}

describe('webhook signing (Standard Webhooks)', () => {
  it('makes whsec_ secrets of 32 random bytes, and event ids without a dot', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
    expect(newEventId()).toMatch(/^msg_[0-9a-f]{32}$/);
  });

  it('signs id, timestamp in seconds and body with every secret, the current one first', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const at = new Date('2026-11-26T10:20:00.900Z');
    const headers = signDelivery('msg_1', at, '{"a":1}', [current, previous]);
    expect(headers['webhook-id']).toBe('msg_1');
    expect(headers['webhook-timestamp']).toBe('1795688400');
    expect(headers['webhook-signature']).toBe(
      `v1,${hmacOf(current, 'msg_1', '1795688400', '{"a":1}')} v1,${hmacOf(previous, 'msg_1', '1795688400', '{"a":1}')}`,
    );
    expect(() => signDelivery('msg_1', at, '{}', [])).toThrow();
  });
});
