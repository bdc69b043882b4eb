import { ApiProperty } from '@nestjs/swagger';
import { COUNT_SCHEMA, MESSAGES, nestedField } from '../../common/validation/fields.js';
import { MAX_EXTERNAL_ID_LENGTH } from '../../people/person-write.js';

/** Scores a call takes at most (SPEC 10.2). */
export const MAX_SCORES = 10_000;

export class ScoreDto {
  @ApiProperty({ minLength: 1, maxLength: MAX_EXTERNAL_ID_LENGTH, example: 'crm-000123', description: 'The person’s external_id.' })
  external_id: string;

  @ApiProperty({ minimum: 0, maximum: 1, example: 0.83, description: 'The score, 0–1.' })
  score: number;
}

/** Every error of a scores list, under `<index>.<field>`; `''` for the list itself. */
function scoresErrors(value: unknown): Record<string, string[]> {
  if (!Array.isArray(value)) return { '': [MESSAGES.notList] };
  if (value.length > MAX_SCORES) return { '': [`Ensure this list has no more than ${MAX_SCORES} items.`] };
  const errors: Record<string, string[]> = {};
  value.forEach((item: unknown, index) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      errors[String(index)] = [MESSAGES.notObject];
      return;
    }
    const { external_id: externalId, score, ...rest } = item as Record<string, unknown>;
    if (typeof externalId !== 'string' || externalId.length === 0 || externalId.length > MAX_EXTERNAL_ID_LENGTH)
      errors[`${index}.external_id`] = [
        externalId === undefined ? MESSAGES.required : `Must be a string of 1–${MAX_EXTERNAL_ID_LENGTH} characters.`,
      ];
    if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1)
      errors[`${index}.score`] = [score === undefined ? MESSAGES.required : 'Must be a number from 0 to 1.'];
    for (const key of Object.keys(rest)) errors[`${index}.${key}`] = ['Unknown field.'];
  });
  return errors;
}

/** `POST /api/v1/ai-model-instances/{id}/scores/` (SPEC 10.2). */
export class WriteScoresDto {
  @nestedField(scoresErrors)
  @ApiProperty({
    type: [ScoreDto],
    maxItems: MAX_SCORES,
    description: 'Up to 10,000 scores; a later entry for the same external_id wins. Unknown external ids are answered, not stored.',
    example: [
      { external_id: 'crm-000123', score: 0.83 },
      { external_id: 'crm-000124', score: 0.12 },
    ],
  })
  scores: { external_id: string; score: number }[];
}

export class ScoresWrittenDto {
  @ApiProperty({ ...COUNT_SCHEMA, maximum: MAX_SCORES, example: 1, description: 'Scores stored (one per person).' })
  written: number;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', maxLength: MAX_EXTERNAL_ID_LENGTH },
    maxItems: MAX_SCORES,
    example: ['crm-000124'],
    description: 'The external ids of the call that name no person of the workspace.',
  })
  unknown_external_ids: string[];
}
