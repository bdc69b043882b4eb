import { Tenant } from '../common/tenancy/tenant.js';

/**
 * Delivery jobs enter the workspace their payload names, which the write that enqueued them took
 * from its own tenant (ESLint allows Tenant.forOperator here, as for the other jobs).
 */
export function signalEventsTenant(customerId: number): Tenant {
  return Tenant.forOperator(customerId);
}
