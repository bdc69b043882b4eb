import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/**
 * The only signal-event SQL that spans workspaces, for the hourly upkeep no request asks for
 * (SPEC 10.4): events held longer than 7 days expire, and events older than the 30-day dedup
 * window are deleted. Each is one statement on the received_at index.
 */
@Injectable()
export class SignalEventsMaintenanceRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Pending events of signals that are not active (paused or archived since the events arrived, or
   * paused by a lost grant) are held: nothing else would turn them, since no delivery runs for them.
   */
  async holdPendingOfInactiveSignals(): Promise<number> {
    const [, affected]: [unknown, number] = await this.dataSource.query(
      `UPDATE signal_events e SET status = 'held'
         FROM signals s
        WHERE s.customer_id = e.customer_id AND s.id = e.signal_id AND s.status <> 1 AND e.status = 'pending'`,
    );
    return affected;
  }

  async expireHeld(heldDays: number): Promise<number> {
    const [, affected]: [unknown, number] = await this.dataSource.query(
      `UPDATE signal_events SET status = 'expired', error = $2
        WHERE status = 'held' AND received_at < now() - make_interval(days => $1)`,
      [heldDays, `held_too_long: held longer than ${heldDays} days while the signal was not active`],
    );
    return affected;
  }

  async deleteOlderThan(days: number): Promise<number> {
    const [, affected]: [unknown, number] = await this.dataSource.query(
      'DELETE FROM signal_events WHERE received_at < now() - make_interval(days => $1)',
      [days],
    );
    return affected;
  }
}
