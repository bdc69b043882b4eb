import type { Connection } from './connection.entity.js';
import { reauthorizeRequired, statusReasonOf } from './connection-readiness.js';
import type { ConnectionDto } from './dto/connection.dto.js';

/** Field by field, so a new column (or a token column) never reaches a response by accident. */
export function toConnectionDto(connection: Connection): ConnectionDto {
  return {
    id: connection.id,
    customer: connection.customerId,
    platform: connection.platform,
    external_account_id: connection.externalAccountId,
    account_name: connection.accountName,
    status: connection.status,
    status_reason: statusReasonOf(connection),
    reauthorize_required: reauthorizeRequired(connection),
    scopes: [...connection.scopes],
    customer_match_terms_accepted: connection.customerMatchTermsAccepted,
    connected_by: connection.connectedBy,
    token_expires_at: connection.tokenExpiresAt?.toISOString() ?? null,
    last_refreshed_at: connection.lastRefreshedAt?.toISOString() ?? null,
    created_at: connection.createdAt.toISOString(),
    updated_at: connection.updatedAt.toISOString(),
  };
}
