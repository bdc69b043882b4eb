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

/** The delivery counts of some signals, on every signal read: a named prepared statement (src/database/prepared-statements.ts). */
const DELIVERIES_SQL = prepared(
  `SELECT signal_id AS "signalId", received, pending, delivered, failed, last_delivered_at AS "lastDeliveredAt", last_error AS "lastError"
     FROM signal_deliveries WHERE customer_id = $1 AND signal_id = ANY($2::bigint[])`,
);

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
  getWithDelivery(id: number): Promise<SignalRow> {
    return this.getByIdWith<SignalRow>(id, DELIVERY_OF_ROW);
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
   * The delivery counts of these signals (SPEC 10.4), one row each by primary key: the counts are
   * kept by triggers on signal_events, so this costs the same at 10 events or 10 million.
   */
  async deliveriesOf(signalIds: number[], transaction?: Transaction): Promise<Map<number, SignalDelivery>> {
    if (signalIds.length === 0) return new Map();
    const { rows } = await this.tenantQuery<SignalDelivery>(DELIVERIES_SQL, [signalIds], transaction);
    return new Map(rows.map((row) => [Number(row.signalId), row]));
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
