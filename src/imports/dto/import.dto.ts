import { ApiProperty } from '@nestjs/swagger';
import { COUNT_SCHEMA, ID_SCHEMA, MAX_ID } from '../../common/validation/fields.js';
import { IMPORT_MODES, IMPORT_TARGETS } from '../import.entity.js';

export class ImportRowErrorDto {
  @ApiProperty({ ...COUNT_SCHEMA, minimum: 1, example: 7, description: 'The 1-based line of the file (a CSV header is line 1).' })
  line: number;

  @ApiProperty({
    type: 'object',
    maxProperties: 128,
    additionalProperties: { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 10 },
    example: { 'identifiers.email': ['invalid_email'] },
    description:
      'Field path → error codes, as a people batch row gets them (`invalid_email`, `missing_external_id`, `duplicate_external_id`, `too_many_traits`, …), plus `non_field_errors`: `wrong_column_count`, `invalid_json`, `invalid_string`; ' +
      'and for a file refused whole, `file`: `not_csv_or_ndjson`, `no_usable_column`, `duplicate_column`, `too_many_columns`, `record_too_large`, `malformed_csv`, `merge_failed`.',
  })
  errors: Record<string, string[]>;
}

export class ImportDto {
  @ApiProperty({ ...ID_SCHEMA, example: 12, readOnly: true })
  id: number;

  @ApiProperty({ ...ID_SCHEMA, example: 1, readOnly: true, description: 'Your workspace (customer) id.' })
  customer: number;

  @ApiProperty({ type: 'string', enum: IMPORT_TARGETS, example: 'people' })
  target: string;

  @ApiProperty({
    ...ID_SCHEMA,
    nullable: true,
    type: 'integer',
    example: null,
    description: 'The audience of an audience import; null for people.',
  })
  audience: number | null;

  @ApiProperty({
    type: 'string',
    enum: [...IMPORT_MODES, null],
    nullable: true,
    example: 'add',
    description: 'How an audience import changes the members; null for people.',
  })
  mode: string | null;

  @ApiProperty({
    type: 'string',
    enum: ['queued', 'processing', 'succeeded', 'failed'],
    example: 'queued',
    description:
      'An import applies all its accepted rows (`succeeded`) or, when it fails, nothing (`failed`, with the reason in `errors_sample`).',
  })
  status: string;

  @ApiProperty({ ...COUNT_SCHEMA, example: 1000, description: 'Rows read (the CSV header not counted).' })
  rows_total: number;

  @ApiProperty({ ...COUNT_SCHEMA, example: 998 })
  rows_accepted: number;

  @ApiProperty({ ...COUNT_SCHEMA, example: 2 })
  rows_rejected: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer', minimum: 1, maximum: MAX_ID },
    maxProperties: 64,
    example: { invalid_email: 2 },
    description: 'Rejected rows counted by error code (a row with two codes counts under both).',
  })
  rejected_by_reason: Record<string, number>;

  @ApiProperty({
    type: [ImportRowErrorDto],
    maxItems: 100,
    example: [{ line: 7, errors: { 'identifiers.email': ['invalid_email'] } }],
    description: 'Up to 100 rejected rows, first lines first.',
  })
  errors_sample: ImportRowErrorDto[];

  @ApiProperty({ type: 'string', format: 'date-time', readOnly: true, example: '2026-05-04T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    readOnly: true,
    example: '2026-05-04T10:00:09.000Z',
    description: 'When the import last changed: its status or its counts.',
  })
  updated_at: string;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    readOnly: true,
    example: '2026-05-04T10:00:02.000Z',
    description: 'When the merge started.',
  })
  started_at: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, readOnly: true, example: '2026-05-04T10:00:09.000Z' })
  finished_at: string | null;
}
