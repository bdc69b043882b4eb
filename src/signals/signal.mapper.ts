import type { SignalDeliveryDto, SignalDto } from './dto/signal.dto.js';
import type { SignalDelivery } from './signal-delivery.entity.js';
import type { Signal } from './signal.entity.js';

/** Field by field, so a new column never reaches a response by accident. A signal without events has no delivery row yet. */
export function toSignalDto(signal: Signal, delivery?: SignalDelivery | null): SignalDto {
  return {
    id: signal.id,
    customer: signal.customerId,
    name: signal.name,
    description: signal.description,
    signal_type: signal.signalType,
    status: signal.status,
    model_instance: signal.modelInstanceId,
    audience: signal.audienceId,
    connection: signal.connectionId,
    config: signal.config,
    status_reason: signal.statusReason ?? null,
    delivery: toDeliveryDto(delivery),
    created_at: signal.createdAt.toISOString(),
    updated_at: signal.updatedAt.toISOString(),
  };
}

function toDeliveryDto(delivery: SignalDelivery | null | undefined): SignalDeliveryDto {
  return {
    received: Number(delivery?.received ?? 0),
    delivered: Number(delivery?.delivered ?? 0),
    failed: Number(delivery?.failed ?? 0),
    pending: Number(delivery?.pending ?? 0),
    last_delivered_at: delivery?.lastDeliveredAt ? new Date(delivery.lastDeliveredAt).toISOString() : null,
    last_error: delivery?.lastError ?? null,
  };
}
