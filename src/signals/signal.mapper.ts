import type { SignalDto } from './dto/signal.dto.js';
import type { Signal } from './signal.entity.js';

/** Field by field, so a new column never reaches a response by accident. */
export function toSignalDto(signal: Signal): SignalDto {
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
    created_at: signal.createdAt.toISOString(),
    updated_at: signal.updatedAt.toISOString(),
  };
}
