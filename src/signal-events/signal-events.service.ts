import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import { buildPage, type Page } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { Transactions } from '../common/tenancy/transactions.js';
import { ConnectionsRepository } from '../connections/connections.repository.js';
import { JOBS, signalDeliveryKey } from '../jobs/job-definitions.js';
import { Jobs } from '../jobs/jobs.service.js';
import { SignalStatus } from '../signals/signal.entity.js';
import { SignalsRepository } from '../signals/signals.repository.js';
import type { EventsAcceptedDto, ListSignalEventsQuery, SignalEventDto } from './dto/signal-event.dto.js';
import { readSignalEvents } from './signal-event-input.js';
import { type ListedSignalEvent, SignalEventsRepository } from './signal-events.repository.js';

/** Accepting and listing a signal's events (SPEC 10.4), for REST and MCP alike. */
@Injectable()
export class SignalEventsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly events: SignalEventsRepository,
    private readonly signals: SignalsRepository,
    private readonly connections: ConnectionsRepository,
    private readonly jobs: Jobs,
    private readonly tenants: TenantContext,
  ) {}

  /**
   * Validates each event against the signal's platform, stores the valid new ones in one INSERT and
   * enqueues the signal's delivery in the same transaction (SPEC 10.6). A draft or archived signal
   * takes none (409); a paused or failed one holds them until it is active again.
   */
  async accept(signalId: number, input: unknown[]): Promise<EventsAcceptedDto> {
    const signal = await this.signals.getById(signalId);
    refuseClosed(signal.status);
    const connection = signal.connectionId === null ? null : await this.connections.findById(signal.connectionId);
    const platform = connection?.platform ?? null;
    const actionSource = platform === 'meta_ads' && typeof signal.config.action_source === 'string' ? signal.config.action_source : null;
    const { rows, rejected, repeated } = readSignalEvents(input, { platform, metaActionSource: actionSource, now: Date.now() });
    const accepted = await this.transactions.run(async (transaction) => {
      const current = await this.signals.getById(signalId, { transaction });
      refuseClosed(current.status);
      const status = current.status === SignalStatus.active ? 'pending' : 'held';
      const inserted = await this.events.insertEvents(signalId, rows, status, transaction);
      if (inserted > 0 && status === 'pending') {
        const customerId = this.tenants.current().customerId;
        await this.jobs.enqueue(
          transaction,
          JOBS.signalDelivery,
          { customerId, signalId },
          { key: signalDeliveryKey(customerId, signalId), runAt: new Date() },
        );
      }
      return inserted;
    });
    return { accepted, duplicates: rows.length - accepted + repeated, rejected };
  }

  async list(signalId: number, query: ListSignalEventsQuery, url: URL): Promise<Page<SignalEventDto>> {
    await this.signals.getById(signalId);
    const { rows, count } = await this.events.list(signalId, query.status, query.page);
    return buildPage(
      query.page,
      count,
      rows.map((row) => toSignalEventDto(signalId, row)),
      url,
    );
  }
}

function refuseClosed(status: number): void {
  if (status === SignalStatus.draft) throw ApiError.conflict('This signal is a draft: activate it before sending events.');
  if (status === SignalStatus.archived) throw ApiError.conflict('This signal is archived and takes no events.');
}

/** Field by field: an event's identifiers never reach a response. */
function toSignalEventDto(signalId: number, row: ListedSignalEvent): SignalEventDto {
  return {
    id: Number(row.id),
    signal: signalId,
    event_id: row.eventId,
    event_time: new Date(row.eventTime).toISOString(),
    value: row.value === null ? null : Number(row.value),
    currency: row.currency,
    status: row.status,
    attempts: Number(row.attempts),
    error: row.error,
    received_at: new Date(row.receivedAt).toISOString(),
    delivered_at: row.deliveredAt === null ? null : new Date(row.deliveredAt).toISOString(),
  };
}
