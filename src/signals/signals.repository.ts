import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import type { PageRequest } from '../common/pagination/pagination.js';
import { prepared } from '../database/prepared-statements.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type AttachedValue, type ListCondition, type ListResult, TenantRepository } from '../common/tenancy/tenant-repository.js';
import type { ListSignalsQuery } from './dto/list-signals.query.js';
import type { SignalDelivery } from './signal-delivery.entity.js';
import { Signal, SignalStatus } from './signal.entity.js';
import type { Transaction } from '../common/tenancy/transactions.js';

/** A signal as a list page returns it, with its delivery counts (null before its first event). */
export type SignalRow = Signal & { delivery: SignalDelivery | null };

/**
 * A listed signal's delivery counts, read in the page statement itself as one JSON object (its
 * timestamps arrive as ISO text, which the mapper reads like a Date).
 */
const DELIVERY_OF_ROW: AttachedValue = {
  as: 'delivery',
  select: `(SELECT json_build_object('received', d.received, 'pending', d.pending, 'delivered', d.delivered, 'failed', d.failed,
            'lastDeliveredAt', d.last_delivered_at, 'lastError', d.last_error)
       FROM signal_deliveries d WHERE d.customer_id = t.customer_id AND d.signal_id = t.id)`,
};

/** The delivery counts alone, for the answer to a write: a named prepared statement (src/database/prepared-statements.ts). */
const DELIVERY_SQL = prepared(`SELECT ${DELIVERY_OF_ROW.select} AS delivery FROM signals t WHERE t.customer_id = $1 AND t.id = $2`);

/** All SQL about signals. */
@Injectable()
export class SignalsRepository extends TenantRepository<Signal> {
  constructor(@InjectRepository(Signal) signals: Repository<Signal>, tenants: TenantContext) {
    super(signals, tenants, 'signal');
  }

  /** Each filter is served by a (customer_id, …) index of the signals table. */
  list(filters: ListSignalsQuery, request: PageRequest): Promise<ListResult<SignalRow>> {
    const conditions: ListCondition<Signal>[] = [];
    if (filters.status !== undefined) conditions.push({ property: 'status', operator: '=', value: filters.status });
    if (filters.signal_type !== undefined) conditions.push({ property: 'signalType', operator: '=', value: filters.signal_type });
    if (filters.model_instance !== undefined)
      conditions.push({ property: 'modelInstanceId', operator: '=', value: filters.model_instance });
    if (filters.audience !== undefined) conditions.push({ property: 'audienceId', operator: '=', value: filters.audience });
    if (filters.connection !== undefined) conditions.push({ property: 'connectionId', operator: '=', value: filters.connection });
    if (filters.search !== undefined) conditions.push({ property: 'name', operator: 'ILIKE', value: filters.search });
    return this.listPage<SignalRow>(conditions, request, { attached: DELIVERY_OF_ROW });
  }

  /** The signal with its delivery counts, in one statement; a 404 when it is missing. */
  getWithDelivery(id: number, transaction?: Transaction): Promise<SignalRow> {
    return this.getByIdWith<SignalRow>(id, DELIVERY_OF_ROW, transaction);
  }

  /** A connection lost its grant: its active signals pause and keep the connection, to resume after a reconnect. */
  async pauseForConnection(connectionId: number, transaction: Transaction): Promise<number> {
    const { affected } = await this.tenantQuery(
      'UPDATE signals SET status = $3, updated_at = now() WHERE customer_id = $1 AND connection_id = $2 AND status = $4',
      [connectionId, SignalStatus.paused, SignalStatus.active],
      transaction,
    );
    return affected;
  }

  /**
   * SPEC section 3: deleting a connection clears the connection of every signal that used it and
   * pauses those that were active. Runs in the caller's transaction; returns the signals touched.
   */
  async detachConnection(connectionId: number, transaction: Transaction): Promise<number> {
    const { affected } = await this.tenantQuery(
      'UPDATE signals SET connection_id = NULL, status = CASE WHEN status = $3 THEN $4 ELSE status END, updated_at = now() WHERE customer_id = $1 AND connection_id = $2',
      [connectionId, SignalStatus.active, SignalStatus.paused],
      transaction,
    );
    return affected;
  }

  /**
   * The signal's delivery counts (SPEC 10.4), null before its first event: one row by key, since the
   * counts are kept by triggers on signal_events, so this costs the same at 10 events or 10 million.
   */
  async deliveryOf(signalId: number, transaction?: Transaction): Promise<SignalDelivery | null> {
    const { rows } = await this.tenantQuery<{ delivery: SignalDelivery | null }>(DELIVERY_SQL, [signalId], transaction);
    return rows[0]?.delivery ?? null;
  }

  /** An active signal turns failed with its reason (SPEC 10.4); false when it was not active (paused or archived meanwhile). */
  async markFailed(signalId: number, reason: string, transaction: Transaction): Promise<boolean> {
    const { affected } = await this.tenantQuery(
      'UPDATE signals SET status = $3, status_reason = $4, updated_at = now() WHERE customer_id = $1 AND id = $2 AND status = $5',
      [signalId, SignalStatus.failed, reason.slice(0, 500), SignalStatus.active],
      transaction,
    );
    return affected > 0;
  }
}
