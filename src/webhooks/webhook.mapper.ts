import type { WebhookDeliveryDto } from './dto/webhook-delivery.dto.js';
import type { WebhookDto } from './dto/webhook.dto.js';
import type { WebhookDelivery } from './webhook-delivery.entity.js';
import type { Webhook } from './webhook.entity.js';

const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());

/** Field by field (STYLE): the secret columns, or a new column, never reach a response by accident. */
export function toWebhookDto(row: Webhook): WebhookDto {
  return {
    id: Number(row.id),
    customer: Number(row.customerId),
    url: row.url,
    events: [...row.events],
    description: row.description,
    enabled: row.enabled,
    disabled_reason: row.disabledReason,
    disabled_at: iso(row.disabledAt),
    failing_since: iso(row.failingSince),
    rotation_overlap_ends_at: iso(row.previousSecretExpiresAt),
    created_at: iso(row.createdAt)!,
    updated_at: iso(row.updatedAt)!,
  };
}

/** SPEC 10.5's fields exactly; the body sent stays in the row. */
export function toWebhookDeliveryDto(row: WebhookDelivery): WebhookDeliveryDto {
  return {
    id: Number(row.id),
    event_type: row.eventType,
    event_id: row.eventId,
    attempt: Number(row.attempt),
    status: row.status,
    response_status: row.responseStatus === null ? null : Number(row.responseStatus),
    duration_ms: row.durationMs === null ? null : Number(row.durationMs),
    error: row.error,
    created_at: iso(row.createdAt)!,
    next_attempt_at: iso(row.nextAttemptAt),
  };
}
