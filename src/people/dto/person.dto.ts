import { ApiHideProperty, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';
import { Allow } from 'class-validator';
import { BulkRowsField } from '../../common/validation/bulk-rows.js';
import { COUNT_SCHEMA, ID_SCHEMA, ReadOnlyField } from '../../common/validation/fields.js';
import { MAX_VALUES_PER_IDENTIFIER } from '../normalization/identifier-normalization.js';
import { MAX_BATCH_PEOPLE, MAX_EXTERNAL_ID_LENGTH, MAX_TRAIT_STRING_LENGTH, MAX_TRAITS } from '../person-write.js';
import { CONSENT_VALUES } from '../person.entity.js';

const SHA256_HEX = { type: 'string', pattern: '^[0-9a-f]{64}$', minLength: 64, maxLength: 64 } as const;

function oneOrMany(item: Record<string, unknown>, description: string, example: unknown): Record<string, unknown> {
  return {
    description,
    example,
    oneOf: [item, { type: 'array', items: item, maxItems: MAX_VALUES_PER_IDENTIFIER }],
  };
}

/** Write-only: identifiers are hashed on arrival and never returned (SPEC 10.1). Documented here, checked by the service. */
export class IdentifiersDto {
  @ApiProperty({
    required: false,
    ...oneOrMany({ type: 'string', maxLength: 320 }, 'One email or up to 5. Trimmed and lowercased, then hashed.', 'ada@example.com'),
  })
  email?: string | string[];

  @ApiProperty({
    required: false,
    ...oneOrMany(
      { type: 'string', maxLength: 64 },
      'One phone number or up to 5, E.164. Without `+` it is read in `country_code` (or the stored one), else as E.164 without its plus.',
      '+15551234567',
    ),
  })
  phone?: string | string[];

  @ApiProperty({ required: false, type: 'string', maxLength: 255, example: 'Ada', description: 'Lowercased (NFC), then hashed.' })
  first_name?: string;

  @ApiProperty({ required: false, type: 'string', maxLength: 255, example: 'Lovelace', description: 'Lowercased (NFC), then hashed.' })
  last_name?: string;

  @ApiProperty({
    required: false,
    type: 'string',
    pattern: '^[A-Za-z]{2}$',
    minLength: 2,
    maxLength: 2,
    example: 'US',
    description: 'ISO 3166-1 alpha-2; kept in clear.',
  })
  country_code?: string;

  @ApiProperty({ required: false, type: 'string', maxLength: 16, example: '94043', description: 'Kept in clear, trimmed.' })
  postal_code?: string;

  @ApiProperty({
    required: false,
    type: 'string',
    format: 'uuid',
    maxLength: 36,
    example: '6d92078a-8246-4ba4-ae5b-76104861e7dc',
    description: 'A mobile advertising id (Meta only), kept as given, lowercase.',
  })
  mobile_ad_id?: string;

  @ApiProperty({
    required: false,
    ...oneOrMany(
      SHA256_HEX,
      'SHA-256 of the trimmed, lowercased email, as 64 lowercase hex; sent to both platforms as given.',
      'a'.repeat(64),
    ),
  })
  email_sha256?: string | string[];

  @ApiProperty({
    required: false,
    ...oneOrMany(
      SHA256_HEX,
      'SHA-256 of the E.164 phone with `+`, as 64 lowercase hex (Google’s form; sent to Google only).',
      'b'.repeat(64),
    ),
  })
  phone_sha256?: string | string[];
}

export class ConsentDto {
  @ApiProperty({
    enum: CONSENT_VALUES,
    example: 'granted',
    default: 'unspecified',
    description: 'Consent to send the person’s data to the ad platforms.',
  })
  ad_user_data: string;

  @ApiProperty({ enum: CONSENT_VALUES, example: 'granted', default: 'unspecified', description: 'Consent to personalised advertising.' })
  ad_personalization: string;
}

const TRAIT_VALUES: SchemaObject[] = [{ type: 'string', maxLength: MAX_TRAIT_STRING_LENGTH }, { type: 'number' }, { type: 'boolean' }];

class PersonReadOnlyFields {
  @ApiHideProperty() @ReadOnlyField() id?: unknown;
  @ApiHideProperty() @ReadOnlyField() customer?: unknown;
  @ApiHideProperty() @ReadOnlyField() matched_keys?: unknown;
  @ApiHideProperty() @ReadOnlyField() audiences?: unknown;
  @ApiHideProperty() @ReadOnlyField() created_at?: unknown;
  @ApiHideProperty() @ReadOnlyField() updated_at?: unknown;
}

/**
 * A person as a write names it: a batch row, or a PATCH body. Only the fields given change; the
 * service checks the values (the error codes are those of a batch's `rejected[].errors`).
 */
export class PersonWriteDto extends PersonReadOnlyFields {
  @Allow()
  @ApiProperty({
    required: false,
    type: 'string',
    minLength: 1,
    maxLength: MAX_EXTERNAL_ID_LENGTH,
    example: 'crm-000123',
    description:
      'Your id for the person, unique in the workspace. In a batch without one it is derived: `email:` + the first 32 hex characters of the Google email hash, else `phone:` + likewise.',
  })
  external_id?: string;

  @Allow()
  @ApiPropertyOptional({
    type: IdentifiersDto,
    writeOnly: true,
    description: 'Write-only. A write replaces the identifiers it names (`null` or blank removes one) and keeps the others.',
  })
  identifiers?: IdentifiersDto;

  @Allow()
  @ApiPropertyOptional({
    type: 'object',
    maxProperties: MAX_TRAITS,
    // `null` (removes the key) rides on the string branch: OpenAPI 3.0 has no null type, and oneOf stays exclusive.
    additionalProperties: { oneOf: [{ ...TRAIT_VALUES[0], nullable: true }, ...TRAIT_VALUES.slice(1)] },
    example: { plan: 'pro', ltv: 420.5, newsletter: true, old_key: null },
    description: 'Merged into the stored traits; `null` removes a key. Keys 1–64 of `[A-Za-z0-9_.-]`, at most 100 in all.',
  })
  traits?: Record<string, string | number | boolean | null>;

  @Allow()
  @ApiPropertyOptional({
    type: ConsentDto,
    description: 'Either key may be left out: it keeps its stored value (`unspecified` for a new person).',
  })
  consent?: Partial<ConsentDto>;
}

export class UpdatePersonDto extends PersonWriteDto {}

/**
 * A list of up to 1,000 person rows, for the batch and an audience's members: the rows themselves
 * are read one by one by the service (readPersonWrite), so one bad row rejects that row only.
 */
export function PeopleRowsField(): PropertyDecorator {
  return BulkRowsField('peopleList', MAX_BATCH_PEOPLE);
}

export class BatchPeopleDto {
  @PeopleRowsField()
  @ApiProperty({
    type: [PersonWriteDto],
    maxItems: MAX_BATCH_PEOPLE,
    description: 'Up to 1,000 people, upserted by external_id.',
    example: [
      { external_id: 'crm-000123', identifiers: { email: 'ada@example.com', phone: '+15551234567' }, traits: { plan: 'pro' } },
      { identifiers: { email: 'grace@example.com' }, consent: { ad_user_data: 'granted', ad_personalization: 'denied' } },
    ],
  })
  people: unknown[];
}

export class RejectedRowDto {
  @ApiProperty({ ...COUNT_SCHEMA, maximum: MAX_BATCH_PEOPLE - 1, example: 2, description: 'The row’s 0-based position in `people`.' })
  index: number;

  @ApiProperty({
    type: 'object',
    // One entry per bad field of the row: its fields, identifiers and traits.
    maxProperties: 128,
    additionalProperties: { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 10 },
    example: { 'identifiers.email': ['invalid_email'] },
    description:
      'Field path → error codes: `invalid_email`, `invalid_phone`, `invalid_name`, `invalid_country_code`, `invalid_postal_code`, `invalid_mobile_ad_id`, `invalid_sha256`, `too_many_values`, `unknown_identifier`, `invalid_identifiers`, `invalid_external_id`, `missing_external_id`, `duplicate_external_id`, `invalid_traits`, `too_many_traits`, `invalid_trait_key`, `invalid_trait_value`, `invalid_consent`, `unknown_consent`, `unknown_field`, `invalid_person`.',
  })
  errors: Record<string, string[]>;
}

export class BatchResultDto {
  @ApiProperty({ ...COUNT_SCHEMA, maximum: MAX_BATCH_PEOPLE, example: 2, description: 'People that did not exist before.' })
  created: number;

  @ApiProperty({ ...COUNT_SCHEMA, maximum: MAX_BATCH_PEOPLE, example: 1, description: 'Existing people (same external_id) updated.' })
  updated: number;

  @ApiProperty({
    type: [RejectedRowDto],
    maxItems: MAX_BATCH_PEOPLE,
    description: 'Rows not applied, with why; the others were.',
    example: [{ index: 2, errors: { 'identifiers.email': ['invalid_email'] } }],
  })
  rejected: RejectedRowDto[];
}

export class PersonDto {
  @ApiProperty({ ...ID_SCHEMA, example: 77, readOnly: true })
  id: number;

  @ApiProperty({ ...ID_SCHEMA, example: 1, readOnly: true, description: 'Your workspace (customer) id.' })
  customer: number;

  @ApiProperty({ type: 'string', minLength: 1, maxLength: MAX_EXTERNAL_ID_LENGTH, example: 'crm-000123' })
  external_id: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: ['email', 'phone', 'address', 'mobile_ad_id'] },
    maxItems: 4,
    uniqueItems: true,
    readOnly: true,
    example: ['email', 'phone'],
    description:
      'Which kinds of key the person has (`address`: first and last name, country and postal code all present); never a value or a hash.',
  })
  matched_keys: string[];

  @ApiProperty({
    type: 'object',
    maxProperties: MAX_TRAITS,
    additionalProperties: { oneOf: TRAIT_VALUES },
    example: { plan: 'pro', ltv: 420.5, newsletter: true },
  })
  traits: Record<string, string | number | boolean>;

  @ApiProperty({ type: ConsentDto })
  consent: ConsentDto;

  @ApiProperty({
    type: 'array',
    items: { ...ID_SCHEMA },
    maxItems: 10000,
    readOnly: true,
    example: [],
    description:
      'Ids of the audiences the person is a member of, ascending (SPEC 10.2): as of each audience’s last membership computation.',
  })
  audiences: number[];

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  created_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time', readOnly: true })
  updated_at: string;
}
