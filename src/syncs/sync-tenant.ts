import { Tenant } from '../common/tenancy/tenant.js';

/**
 * Sync jobs enter the workspace their payload names, which the write that enqueued them took from
 * its own tenant (ESLint allows Tenant.forOperator here, as for the other jobs).
 */
export function syncTenant(customerId: number): Tenant {
  return Tenant.forOperator(customerId);
}
