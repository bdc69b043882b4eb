import { ApiProperty } from '@nestjs/swagger';
import { ChoiceField, COUNT_SCHEMA } from '../../common/validation/fields.js';
import { PeopleRowsField, PersonWriteDto, RejectedRowDto } from '../../people/dto/person.dto.js';
import { MAX_BATCH_PEOPLE } from '../../people/person-write.js';

export const MEMBER_ACTIONS = ['add', 'remove'] as const;

/** `POST /api/v1/audiences/{id}/members/` (SPEC 10.2): people added to or removed from an upload audience. */
export class ChangeMembersDto {
  @ChoiceField(MEMBER_ACTIONS, {
    example: 'add',
    description:
      '`add`: the rows are upserted as people, then made members. `remove`: the people the rows name (by `external_id`, or by the one derived from their email or phone) leave.',
  })
  action: (typeof MEMBER_ACTIONS)[number];

  @PeopleRowsField()
  @ApiProperty({
    type: [PersonWriteDto],
    maxItems: MAX_BATCH_PEOPLE,
    description: 'Up to 1,000 rows shaped as in `POST /api/v1/people/batch/`.',
    example: [
      { external_id: 'crm-000123', identifiers: { email: 'ada@example.com' }, traits: { plan: 'pro' } },
      { external_id: 'crm-000124' },
    ],
  })
  people: unknown[];
}

export class MembersChangedDto {
  @ApiProperty({ ...COUNT_SCHEMA, maximum: MAX_BATCH_PEOPLE, example: 2, description: 'People who became members (not members before).' })
  added: number;

  @ApiProperty({ ...COUNT_SCHEMA, maximum: MAX_BATCH_PEOPLE, example: 0, description: 'People who left the audience (members before).' })
  removed: number;

  @ApiProperty({
    type: [RejectedRowDto],
    maxItems: MAX_BATCH_PEOPLE,
    description: 'Rows not applied, with their index and error codes; the others were.',
    example: [{ index: 1, errors: { 'identifiers.email': ['invalid_email'] } }],
  })
  rejected: RejectedRowDto[];
}
