import { ApiError, type FieldErrors } from '../common/errors/api-error.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import type { Connection, Platform } from './connection.entity.js';
import type { ConnectionsRepository } from './connections.repository.js';

export interface ExternalConnection {
  customerId: number;
  platform: Platform;
  externalAccountId: string;
  accountName: string;
}

/**
 * Registers a connection whose OAuth grant is managed elsewhere (SPEC section 9,
 * `audience-admin connection create`): active, with no tokens, no scopes and no connecting user.
 * The web interface's OAuth flow is the only other way a connection comes to exist. Runs inside
 * the customer's tenant context (the CLI enters it with TenantContext.run).
 */
export async function registerExternalConnection(
  connections: ConnectionsRepository,
  customerExists: (customerId: number) => Promise<boolean>,
  values: ExternalConnection,
): Promise<Connection> {
  const externalAccountId = values.externalAccountId.trim();
  const accountName = values.accountName.trim();
  const errors: FieldErrors = {};
  // Counted in code points, as PostgreSQL counts varchar lengths.
  if (!lengthBetween(externalAccountId, 1, 64)) errors.account_id = ['Must be 1 to 64 characters.'];
  if (!lengthBetween(accountName, 1, 255)) errors.account_name = ['Must be 1 to 255 characters.'];
  if (Object.keys(errors).length > 0) throw ApiError.validation(errors);
  if (!(await customerExists(values.customerId))) {
    throw ApiError.field('customer', `Customer ${values.customerId} does not exist.`);
  }
  try {
    return await connections.insert({
      platform: values.platform,
      externalAccountId,
      accountName,
      status: 'active',
      scopes: [],
      connectedBy: null,
      tokenExpiresAt: null,
      lastRefreshedAt: null,
    });
  } catch (error) {
    if (!isUniqueViolation(error, 'connections_customer_account_key')) throw error;
    const existing = await connections.findByAccount(values.platform, externalAccountId);
    const which = existing ? ` (connection ${existing.id})` : '';
    throw ApiError.conflict(
      `Customer ${values.customerId} already has a ${values.platform} connection for account ${externalAccountId}${which}.`,
    );
  }
}

function lengthBetween(text: string, min: number, max: number): boolean {
  const length = [...text].length;
  return length >= min && length <= max;
}
