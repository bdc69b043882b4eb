import { Tenant } from '../common/tenancy/tenant.js';

/**
 * The merge job enters the workspace its payload names, which the upload wrote from its own
 * request's tenant (ESLint allows Tenant.forOperator here, as for the other jobs).
 */
export function importTenant(customerId: number): Tenant {
  return Tenant.forOperator(customerId);
}
