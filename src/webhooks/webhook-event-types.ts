/** The events an endpoint may subscribe to (SPEC 10.5); the names are part of the API. */
export const WEBHOOK_EVENT_TYPES = [
  'sync.succeeded',
  'sync.failed',
  'connection.reauthorization_required',
  'signal.failed',
  'import.finished',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * What `POST /api/v1/webhooks/{id}/test/` sends: never subscribed to, delivered to that one
 * endpoint only (even a disabled one, so an admin can check it before enabling it again).
 */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

/** Every type a delivery may carry. */
export const DELIVERY_EVENT_TYPES = [...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT] as const;
export type DeliveryEventType = (typeof DELIVERY_EVENT_TYPES)[number];
