import { Injectable } from '@nestjs/common';
import { type Transaction, entityManagerOf } from '../common/tenancy/transactions.js';

/**
 * The only membership SQL that spans workspaces, for the periodic refresh no request asks for: it
 * names each audience by (customer_id, id), and each recompute then runs in that workspace.
 */
@Injectable()
export class MembershipMaintenanceRepository {
  async activeComputedAudiences(transaction: Transaction): Promise<{ customerId: number; audienceId: number }[]> {
    const rows: { customer_id: string; id: string }[] = await entityManagerOf(transaction).query(
      `SELECT customer_id, id FROM audiences WHERE status = 'active' AND source_type IN ('rules', 'model') ORDER BY customer_id, id`,
    );
    return rows.map((row) => ({ customerId: Number(row.customer_id), audienceId: Number(row.id) }));
  }
}
