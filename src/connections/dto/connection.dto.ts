import { ApiHideProperty, ApiProperty, PartialType } from '@nestjs/swagger';
import { BooleanField, ID_SCHEMA, ReadOnlyField, RequiredString } from '../../common/validation/fields.js';
import { CONNECTION_STATUSES, PLATFORMS } from '../connection.entity.js';

/**
 * Everything a response shows except account_name and customer_match_terms_accepted is read-only:
 * a client may echo it back in a body and it is ignored (SPEC section 3). Only the OAuth flow and
 * the CLI set these.
 */
class ConnectionReadOnlyFields {
  @ApiHideProperty() @ReadOnlyField() id?: unknown;
  @ApiHideProperty() @ReadOnlyField() customer?: unknown;
  @ApiHideProperty() @ReadOnlyField() platform?: unknown;
  @ApiHideProperty() @ReadOnlyField() external_account_id?: unknown;
  @ApiHideProperty() @ReadOnlyField() status?: unknown;
  @ApiHideProperty() @ReadOnlyField() status_reason?: unknown;
  @ApiHideProperty() @ReadOnlyField() reauthorize_required?: unknown;
  @ApiHideProperty() @ReadOnlyField() scopes?: unknown;
  @ApiHideProperty() @ReadOnlyField() connected_by?: unknown;
  @ApiHideProperty() @ReadOnlyField() token_expires_at?: unknown;
  @ApiHideProperty() @ReadOnlyField() last_refreshed_at?: unknown;
  @ApiHideProperty() @ReadOnlyField() created_at?: unknown;
  @ApiHideProperty() @ReadOnlyField() updated_at?: unknown;
}

class ConnectionEditableFields extends ConnectionReadOnlyFields {
  @RequiredString({ max: 255, example: 'Acme Shoes — EU', description: 'Display name of the account; trimmed.' })
  account_name: string;

  @BooleanField({
    example: true,
    description:
      "Google connections only: your organisation accepts Google's Customer Match terms for this account (SPEC 10.3). " +
      'Only an admin may change it; an editor or an API key that tries → 403. `true` on a Meta connection → 400.',
  })
  customer_match_terms_accepted: boolean;
}

/** Every field optional; an explicit null is still checked (so `"account_name": null` is a 400). */
export class UpdateConnectionDto extends PartialType(ConnectionEditableFields, { skipNullProperties: false }) {}

/** The response: the swagger plugin reads types, `| null` and presence; the decorators add what TypeScript cannot say. */
export class ConnectionDto {
  @ApiProperty({ ...ID_SCHEMA, example: 3, readOnly: true })
  id: number;

  @ApiProperty({ ...ID_SCHEMA, example: 1, readOnly: true, description: 'Your workspace (customer) id.' })
  customer: number;

  @ApiProperty({ enum: PLATFORMS, example: 'google_ads', readOnly: true })
  platform: string;

  @ApiProperty({ maxLength: 64, example: '1234567890', readOnly: true, description: 'The account id at the ad platform.' })
  external_account_id: string;

  @ApiProperty({ minLength: 1, maxLength: 255, example: 'Acme Shoes — EU' })
  account_name: string;

  @ApiProperty({
    enum: CONNECTION_STATUSES,
    example: 'active',
    readOnly: true,
    description: 'Maintained by the platform: `expired` or `revoked` grants need the OAuth flow again.',
  })
  status: string;

  @ApiProperty({
    type: 'string',
    nullable: true,
    // OpenAPI 3.0: a nullable enum lists null among its values.
    enum: ['invalid_grant', 'token_expired', 'access_revoked', 'scope_missing', null],
    readOnly: true,
    example: null,
    description:
      'Why the connection is not `active`, machine-readable: `invalid_grant` (the provider no longer honours the grant: ' +
      'revoked or expired there), `token_expired`, `access_revoked` (the person removed the app or changed their password). ' +
      'On an `active` Google connection, `scope_missing`: the grant lacks `https://www.googleapis.com/auth/datamanager`, so ' +
      'audiences cannot sync to it (signals still deliver); reconnecting with every requested permission clears it. Null otherwise.',
  })
  status_reason: string | null;

  @ApiProperty({
    readOnly: true,
    example: false,
    description:
      'True when only a new grant helps: the grant is gone (`expired` or `revoked`), or a Google grant lacks the Data Manager ' +
      'scope (`status_reason` `scope_missing`). Offer "Reconnect", which runs the OAuth flow again and keeps this id.',
  })
  reauthorize_required: boolean;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', maxLength: 256 },
    maxItems: 32,
    readOnly: true,
    example: ['https://www.googleapis.com/auth/adwords', 'https://www.googleapis.com/auth/datamanager'],
    description: 'The OAuth scopes the grant holds, as the provider reported them when it was made or last refreshed.',
  })
  scopes: string[];

  @ApiProperty({
    example: false,
    description:
      "Google only: an admin declared Google's Customer Match terms accepted for this account; until then audience syncs to " +
      'it fail with `terms_not_accepted`. Default false; always false on Meta connections. Only an admin may change it.',
  })
  customer_match_terms_accepted: boolean;

  @ApiProperty({ ...ID_SCHEMA, readOnly: true, example: 7, description: 'The user who connected the account.' })
  connected_by: number | null;

  @ApiProperty({ format: 'date-time', readOnly: true, example: '2026-11-21T11:00:00.000Z' })
  token_expires_at: string | null;

  @ApiProperty({ format: 'date-time', readOnly: true, example: '2026-11-21T10:00:00.000Z' })
  last_refreshed_at: string | null;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  created_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  updated_at: string;
}
