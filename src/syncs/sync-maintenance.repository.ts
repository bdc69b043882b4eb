import { Injectable } from '@nestjs/common';
import { type Transaction, entityManagerOf } from '../common/tenancy/transactions.js';

/**
 * The only sync SQL that is not one workspace's: the schedule's list of workspaces to look at,
 * and the shared rate budgets, which belong to ad accounts and to the deployment's Google project
 * rather than to a workspace (two workspaces may share an ad account).
 */
@Injectable()
export class SyncMaintenanceRepository {
  /** Workspaces with an active audience that has a destination: the schedule looks into each. */
  async workspacesWithDestinations(transaction: Transaction): Promise<number[]> {
    const rows: { customer_id: string }[] = await entityManagerOf(transaction).query(
      `SELECT DISTINCT a.customer_id FROM audiences a
         JOIN audience_connections l ON l.customer_id = a.customer_id AND l.audience_id = a.id
        WHERE a.status = 'active' ORDER BY a.customer_id`,
    );
    return rows.map((row) => Number(row.customer_id));
  }

  /**
   * Takes `count` requests from the scope's token bucket (`perMinute` requests, refilled
   * continuously, a minute's worth at most) in one statement, so every worker process draws from
   * the same row. Answers how many seconds the caller must wait before sending them: 0 when the
   * tokens were there; otherwise they are booked against the refill and the wait is the time until
   * they are paid.
   */
  async takeRequests(transaction: Transaction, scope: string, perMinute: number, count: number): Promise<number> {
    const rows: { tokens: number }[] = await entityManagerOf(transaction).query(
      `INSERT INTO sync_rate_budgets AS b (scope, tokens, refilled_at) VALUES ($1, $2::double precision - $3, clock_timestamp())
       ON CONFLICT (scope) DO UPDATE SET
         tokens = least($2::double precision, b.tokens + extract(epoch FROM clock_timestamp() - b.refilled_at) * $2::double precision / 60) - $3,
         refilled_at = clock_timestamp()
       RETURNING tokens`,
      [scope, perMinute, count],
    );
    const tokens = Number(rows[0]!.tokens);
    return tokens >= 0 ? 0 : (-tokens * 60) / perMinute;
  }
}
