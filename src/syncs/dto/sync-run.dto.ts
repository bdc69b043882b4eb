import { ApiProperty } from '@nestjs/swagger';
import { BooleanField, COUNT_SCHEMA, ID_SCHEMA, IntegerField, MAX_ID, ReferenceField } from '../../common/validation/fields.js';
import { SYNC_STATUSES, SYNC_TRIGGERS } from '../sync-run.entity.js';

/** The `error_code`s a run can end with (SPEC 10.3). */
export const SYNC_ERROR_CODES = [
  'reauthorize_required',
  'terms_not_accepted',
  'rate_limited',
  'platform_unavailable',
  'audience_flagged',
  'not_found',
  'permission_denied',
  'invalid_request',
  'platform_error',
  'destination_removed',
  'audience_not_active',
  'verdict_unavailable',
] as const;

const AT = '2026-11-26T10:00:00.000Z';

export class SyncRunDto {
  @ApiProperty({ ...ID_SCHEMA, example: 51, readOnly: true })
  id: number;

  @ApiProperty({ ...ID_SCHEMA, example: 1, readOnly: true })
  customer: number;

  @ApiProperty({ ...ID_SCHEMA, example: 41 })
  audience: number;

  @ApiProperty({ ...ID_SCHEMA, example: 3, description: "The destination: one of the audience's connections." })
  connection: number;

  @ApiProperty({
    type: 'string',
    nullable: true,
    maxLength: 64,
    pattern: '^[0-9]{1,64}$',
    example: '8123456789',
    description: 'The list on the platform (Google user list id, Meta custom audience id); null until the first real run creates it.',
  })
  platform_audience_id: string | null;

  @ApiProperty({ type: 'string', enum: SYNC_TRIGGERS, example: 'manual', description: 'What started the run.' })
  trigger: string;

  @ApiProperty({ type: 'boolean', example: false, description: 'A dry run counts what it would send and sends nothing.' })
  dry_run: boolean;

  @ApiProperty({
    type: 'string',
    enum: SYNC_STATUSES,
    example: 'succeeded',
    description:
      '`queued` → `running` → (`awaiting_platform`, Google: waiting for its verdict on the requests) → `succeeded`, `partially_failed` (some members failed: see `failed_by_reason`) or `failed` (see `error_code`); a queued run can be `cancelled`.',
  })
  status: string;

  @ApiProperty({
    ...COUNT_SCHEMA,
    nullable: true,
    example: 1200,
    description: 'Members to add or update when the run started; null before it starts.',
  })
  planned_add: number | null;

  @ApiProperty({
    ...COUNT_SCHEMA,
    nullable: true,
    example: 35,
    description: 'People to remove from the destination when the run started; null before it starts.',
  })
  planned_remove: number | null;

  @ApiProperty({ ...COUNT_SCHEMA, example: 1198, description: 'Members the platform accepted.' })
  added: number;

  @ApiProperty({ ...COUNT_SCHEMA, example: 35, description: 'People the platform accepted to remove.' })
  removed: number;

  @ApiProperty({ ...COUNT_SCHEMA, example: 2, description: 'Members not sent or refused, counted by reason in `failed_by_reason`.' })
  failed: number;

  @ApiProperty({
    ...COUNT_SCHEMA,
    example: 14,
    description: 'Members whose consent (`ad_user_data` or `ad_personalization`) is denied: sent nowhere, and removed where they were.',
  })
  skipped_consent: number;

  @ApiProperty({ ...COUNT_SCHEMA, example: 3, description: 'Members with no key this platform matches on.' })
  skipped_unmatchable: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer', minimum: 1, maximum: MAX_ID },
    maxProperties: 64,
    example: { invalid_hash: 2 },
    description:
      'Failed members by reason: `invalid_hash`, `invalid_field`, `too_large` (checked before sending), `audience_too_small` (Meta refused the removal; retried at the next sync), `invalid_request`, `request_failed`, or the reasons Google counts in its verdict (`INVALID_SHA256_FORMAT`, …).',
  })
  failed_by_reason: Record<string, number>;

  @ApiProperty({
    type: 'number',
    minimum: 0,
    maximum: 1,
    nullable: true,
    example: 0.62,
    description:
      "Google's match rate of the list, or for Meta the middle of the audience's approximate size over the members sent; null when the platform gives none.",
  })
  match_rate: number | null;

  @ApiProperty({
    type: 'string',
    enum: [...SYNC_ERROR_CODES, null],
    nullable: true,
    example: null,
    description: 'Why the run failed or stopped.',
  })
  error_code: string | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    maxLength: 1000,
    example: null,
    description: "The platform's own message, or ours, in words; never a hash or a token.",
  })
  error_detail: string | null;

  @ApiProperty({ ...COUNT_SCHEMA, example: 1, description: 'Starts of the run, resumes included.' })
  attempts: number;

  @ApiProperty({ type: 'string', format: 'date-time', example: AT })
  queued_at: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: AT })
  started_at: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: AT })
  finished_at: string | null;
}

/** `POST /api/v1/syncs/` (SPEC 10.3). */
export class CreateSyncDto {
  @IntegerField({ min: 1, max: MAX_ID, example: 41, description: 'An active audience of your workspace.' })
  audience: number;

  @ReferenceField({
    example: 3,
    description: "One of the audience's destination connections; null or left out: every destination of the audience.",
  })
  connection?: number | null;

  @BooleanField({ optional: true, example: false, default: false, description: 'Count what would be sent and send nothing.' })
  dry_run?: boolean;
}

export class SyncRunsDto {
  @ApiProperty({
    type: [SyncRunDto],
    maxItems: 100,
    description: 'One run per destination: a new one, or the one already queued or running for it.',
    example: [
      {
        id: 51,
        customer: 1,
        audience: 41,
        connection: 3,
        platform_audience_id: '8123456789',
        trigger: 'manual',
        dry_run: false,
        status: 'queued',
        planned_add: null,
        planned_remove: null,
        added: 0,
        removed: 0,
        failed: 0,
        skipped_consent: 0,
        skipped_unmatchable: 0,
        failed_by_reason: {},
        match_rate: null,
        error_code: null,
        error_detail: null,
        attempts: 0,
        queued_at: AT,
        started_at: null,
        finished_at: null,
      },
    ],
  })
  runs: SyncRunDto[];
}
