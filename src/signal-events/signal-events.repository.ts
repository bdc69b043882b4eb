import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { offsetOf, type PageRequest } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { TenantRepository } from '../common/tenancy/tenant-repository.js';
import type { Transaction } from '../common/tenancy/transactions.js';
import { Signal } from '../signals/signal.entity.js';
import type { SignalEventStatus } from './signal-event.entity.js';
import type { SignalEventRow } from './signal-event-input.js';

/** An event as the list shows it: its delivery, never its identifiers. */
export interface ListedSignalEvent {
  id: string;
  eventId: string;
  eventTime: Date;
  value: number | null;
  currency: string | null;
  status: SignalEventStatus;
  attempts: number;
  error: string | null;
  receivedAt: Date;
  deliveredAt: Date | null;
}

/** An event as a delivery reads it: what the platform payloads are built from. */
export interface PendingSignalEvent {
  id: string;
  eventId: string;
  eventTime: Date;
  value: number | null;
  currency: string | null;
  externalId: string | null;
  googleUserData: Buffer | null;
  metaUserData: Buffer | null;
  countryCode: string | null;
  postalCode: string | null;
  mobileAdId: string | null;
  gclid: string | null;
  fbc: string | null;
  fbp: string | null;
  clientIpAddress: string | null;
  clientUserAgent: string | null;
  eventSourceUrl: string | null;
  attempts: number;
}

const ORDER_COLUMNS: Record<string, string> = { id: 'id', event_time: 'event_time', received_at: 'received_at' };

/**
 * The INSERT of a request's accepted events (SPEC 10.4), named here for the repository and for the
 * benchmark's framework floor (bench/), which must send exactly what the service sends. `$1` is
 * the workspace; `insertEventsParameters()` gives `$2` on.
 *
 * An event_id is unique per signal for 30 days. The hourly upkeep deletes older rows, but until it
 * runs, an event_id received more than 30 days ago is a new event: its row is taken over by the
 * new one (a new id and received_at, nothing of the old delivery kept), and counted as accepted.
 */
export const INSERT_EVENTS_SQL = `INSERT INTO signal_events (customer_id, signal_id, status, event_id, event_time, value, currency, external_id, google_user_data, meta_user_data,
     country_code, postal_code, mobile_ad_id, gclid, fbc, fbp, client_ip_address, client_user_agent, event_source_url)
   SELECT $1, $2, $3, e.* FROM unnest($4::text[], $5::timestamptz[], $6::float8[], $7::text[], $8::text[], $9::bytea[], $10::bytea[],
     $11::text[], $12::text[], $13::uuid[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[]) AS e
   ON CONFLICT (customer_id, signal_id, event_id) DO UPDATE
     SET id = DEFAULT, status = EXCLUDED.status, event_time = EXCLUDED.event_time, value = EXCLUDED.value, currency = EXCLUDED.currency,
       external_id = EXCLUDED.external_id, google_user_data = EXCLUDED.google_user_data, meta_user_data = EXCLUDED.meta_user_data,
       country_code = EXCLUDED.country_code, postal_code = EXCLUDED.postal_code, mobile_ad_id = EXCLUDED.mobile_ad_id,
       gclid = EXCLUDED.gclid, fbc = EXCLUDED.fbc, fbp = EXCLUDED.fbp, client_ip_address = EXCLUDED.client_ip_address,
       client_user_agent = EXCLUDED.client_user_agent, event_source_url = EXCLUDED.event_source_url,
       attempts = 0, error = NULL, received_at = DEFAULT, delivered_at = NULL
     WHERE signal_events.received_at < now() - interval '30 days'
   RETURNING 1`;

/** The INSERT's parameters after the workspace: the signal, the events' status, then one array per column. */
export function insertEventsParameters(signalId: number, rows: SignalEventRow[], status: 'pending' | 'held'): unknown[] {
  const column = <K extends keyof SignalEventRow>(key: K) => rows.map((row) => row[key]);
  return [
    signalId,
    status,
    column('eventId'),
    column('eventTime'),
    column('value'),
    column('currency'),
    column('externalId'),
    column('googleUserData'),
    column('metaUserData'),
    column('countryCode'),
    column('postalCode'),
    column('mobileAdId'),
    column('gclid'),
    column('fbc'),
    column('fbp'),
    column('clientIpAddress'),
    column('clientUserAgent'),
    column('eventSourceUrl'),
  ];
}

/**
 * All SQL about signal events (SPEC 10.4), part of the signal aggregate: every statement is narrowed
 * to the workspace and the signal. Writes are set-based: one INSERT per accepted request (unnest
 * of one array per column), one UPDATE per delivered, failed or held batch; the delivery counts
 * follow from the statement triggers of migration 1764310000000.
 */
@Injectable()
export class SignalEventsRepository extends TenantRepository<Signal> {
  constructor(@InjectRepository(Signal) signals: Repository<Signal>, tenants: TenantContext) {
    super(signals, tenants, 'signal');
  }

  /**
   * Stores the events that are new, in one statement: a repeat of an event_id the signal received
   * in the last 30 days, from this request or a concurrent one, is skipped by the unique index (ON
   * CONFLICT), never by a read before the write. Answers how many were new.
   */
  async insertEvents(signalId: number, rows: SignalEventRow[], status: 'pending' | 'held', transaction: Transaction): Promise<number> {
    if (rows.length === 0) return 0;
    const { rows: inserted } = await this.tenantQuery(INSERT_EVENTS_SQL, insertEventsParameters(signalId, rows, status), transaction);
    return inserted.length;
  }

  /** A page of the signal's events, newest first by default, on the (signal, status, id) index; the total from the delivery counts when unfiltered. */
  async list(
    signalId: number,
    status: SignalEventStatus | undefined,
    request: PageRequest,
  ): Promise<{ rows: ListedSignalEvent[]; count: number }> {
    const column = ORDER_COLUMNS[request.ordering.field] ?? 'id';
    const order =
      column === 'id' ? `id ${request.ordering.direction}` : `${column} ${request.ordering.direction}, id ${request.ordering.direction}`;
    const filter = status === undefined ? '' : ' AND status = $5';
    const { rows } = await this.tenantQuery<ListedSignalEvent>(
      `SELECT id::text AS id, event_id AS "eventId", event_time AS "eventTime", value, currency, status, attempts, error,
              received_at AS "receivedAt", delivered_at AS "deliveredAt"
         FROM signal_events WHERE customer_id = $1 AND signal_id = $2${filter}
        ORDER BY ${order} LIMIT $3 OFFSET $4`,
      status === undefined ? [signalId, request.pageSize, offsetOf(request)] : [signalId, request.pageSize, offsetOf(request), status],
    );
    const counted =
      status === undefined
        ? await this.tenantQuery<{ count: string }>(
            'SELECT received::text AS count FROM signal_deliveries WHERE customer_id = $1 AND signal_id = $2',
            [signalId],
          )
        : await this.tenantQuery<{ count: string }>(
            'SELECT count(*)::text AS count FROM signal_events WHERE customer_id = $1 AND signal_id = $2 AND status = $3',
            [signalId, status],
          );
    return { rows, count: Number(counted.rows[0]?.count ?? 0) };
  }

  /** The oldest pending events, at most `limit`, to send in one request. */
  async pendingBatch(signalId: number, limit: number): Promise<PendingSignalEvent[]> {
    const { rows } = await this.tenantQuery<PendingSignalEvent>(
      `SELECT id::text AS id, event_id AS "eventId", event_time AS "eventTime", value, currency, external_id AS "externalId",
              google_user_data AS "googleUserData", meta_user_data AS "metaUserData", country_code AS "countryCode",
              postal_code AS "postalCode", mobile_ad_id::text AS "mobileAdId", gclid, fbc, fbp, client_ip_address AS "clientIpAddress",
              client_user_agent AS "clientUserAgent", event_source_url AS "eventSourceUrl", attempts
         FROM signal_events WHERE customer_id = $1 AND signal_id = $2 AND status = 'pending'
        ORDER BY id LIMIT $3`,
      [signalId, limit],
    );
    return rows;
  }

  /**
   * The platform accepted these events: delivered, and the signal's last delivery is now. One
   * statement, so a reader never sees the events counted delivered (the counting trigger runs at its
   * end) while `last_delivered_at` is still the old one, as it could between two statements.
   */
  async markDelivered(signalId: number, ids: string[]): Promise<void> {
    await this.tenantQuery(
      `WITH delivered AS (
         UPDATE signal_events SET status = 'delivered', delivered_at = now(), error = NULL
          WHERE customer_id = $1 AND signal_id = $2 AND id = ANY($3::bigint[]) AND status = 'pending')
       UPDATE signal_deliveries SET last_delivered_at = now(), retry_at = NULL WHERE customer_id = $1 AND signal_id = $2`,
      [signalId, ids],
    );
  }

  /** These events will not be delivered, for this reason. */
  async markFailed(signalId: number, ids: string[], error: string): Promise<void> {
    await this.tenantQuery(
      `UPDATE signal_events SET status = 'failed', error = $4
        WHERE customer_id = $1 AND signal_id = $2 AND id = ANY($3::bigint[]) AND status = 'pending'`,
      [signalId, ids, error.slice(0, 300)],
    );
  }

  /** One more try of the request that carried these events went wrong; they stay pending. */
  async countAttempt(signalId: number, ids: string[], error: string): Promise<void> {
    await this.tenantQuery(
      `UPDATE signal_events SET attempts = attempts + 1, error = $4
        WHERE customer_id = $1 AND signal_id = $2 AND id = ANY($3::bigint[]) AND status = 'pending'`,
      [signalId, ids, error.slice(0, 300)],
    );
  }

  /** The signal is not active: its pending events wait (SPEC 10.4, held at most 7 days). */
  async hold(signalId: number): Promise<number> {
    const { affected } = await this.tenantQuery(
      `UPDATE signal_events SET status = 'held' WHERE customer_id = $1 AND signal_id = $2 AND status = 'pending'`,
      [signalId],
    );
    return affected;
  }

  /** The signal is active again: what it held is to be sent, with fresh attempts. */
  async release(signalId: number): Promise<number> {
    const { affected } = await this.tenantQuery(
      `UPDATE signal_events SET status = 'pending', attempts = 0 WHERE customer_id = $1 AND signal_id = $2 AND status = 'held'`,
      [signalId],
    );
    return affected;
  }

  /** The last delivery error in words, and when the next try may be (null: at once). */
  async recordError(signalId: number, error: string, retryAt: Date | null, transaction?: Transaction): Promise<void> {
    await this.tenantQuery(
      'UPDATE signal_deliveries SET last_error = $3, last_error_at = now(), retry_at = $4 WHERE customer_id = $1 AND signal_id = $2',
      [signalId, error.slice(0, 300), retryAt],
      transaction,
    );
  }

  /** Not before when the platform may be asked again, or null. */
  async retryAt(signalId: number): Promise<Date | null> {
    const { rows } = await this.tenantQuery<{ retryAt: Date | null }>(
      'SELECT retry_at AS "retryAt" FROM signal_deliveries WHERE customer_id = $1 AND signal_id = $2',
      [signalId],
    );
    return rows[0]?.retryAt ?? null;
  }
}
