import { Tenant } from '../common/tenancy/tenant.js';

/**
 * A delivery job enters the workspace its payload names, which the emitting transaction wrote from
 * its own tenant (ESLint allows Tenant.forOperator here, as for the other jobs).
 */
export function deliveryTenant(customerId: number): Tenant {
  return Tenant.forOperator(customerId);
}
