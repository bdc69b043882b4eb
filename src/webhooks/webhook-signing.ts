/**
 * Standard Webhooks, version 1.0.0 (github.com/standard-webhooks/standard-webhooks,
 * spec/standard-webhooks.md, read for this): the `webhook-id`, `webhook-timestamp` (integer Unix
 * seconds) and `webhook-signature` headers; symmetric `v1` signatures, HMAC-SHA256 over
 * `{id}.{timestamp}.{body}`, space-delimited so an old and a new secret can both sign during a
 * rotation; secrets of at least 24 random bytes shown as `whsec_<base64>`, one per endpoint; ids
 * that carry no `.`. The signing itself is the specification's own JavaScript library.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';

/** Standard Webhooks' secret prefix; the rest is the key in base64. */
export const SECRET_PREFIX = 'whsec_';
/** 32 random bytes: the key length HMAC-SHA256 works best with (Standard Webhooks allows 24 to 64). */
const SECRET_BYTES = 32;

/** A new signing secret, `whsec_<base64 of 32 random bytes>`. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** A new event id (the `webhook-id` header): unique per event, the same on every try of it, and without a `.` (the specification's rule). */
export function newEventId(): string {
  return `msg_${randomUUID().replaceAll('-', '')}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The Standard Webhooks headers of one try: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per
 * secret, space-separated, the current secret first; during a rotation's overlap the previous
 * secret signs too, so a receiver that still holds it keeps verifying. The timestamp is the try's
 * own (receivers refuse old ones), while the id stays the event's.
 */
export function signDelivery(eventId: string, at: Date, body: string, secrets: readonly string[]): SignedHeaders {
  if (secrets.length === 0) throw new Error('a delivery needs a signing secret');
  const signature = secrets.map((secret) => new StandardWebhook(secret).sign(eventId, at, body)).join(' ');
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
}
