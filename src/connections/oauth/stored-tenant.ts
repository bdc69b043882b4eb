import { Tenant } from '../../common/tenancy/tenant.js';

/**
 * The workspace named by a row this service wrote itself, never by request input: a connection
 * flow's state (written when a signed-in admin or editor of that workspace started the flow), or
 * a connection the token sweep claimed. The callback and the sweep have no credential to take a
 * workspace from, so this is how they enter one (ESLint allows Tenant.forOperator here only).
 */
export function tenantOfStoredRow(row: { customerId: number }): Tenant {
  return Tenant.forOperator(row.customerId);
}
