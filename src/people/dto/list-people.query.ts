import { PagedQuery } from '../../common/pagination/list-query.js';
import { ExactTextFilter, IdFilter } from '../../common/validation/query-fields.js';
import { MAX_EXTERNAL_ID_LENGTH } from '../person-write.js';

/**
 * `GET /api/v1/people/` (SPEC 10.1). People have no name or status: `ordering` is over id,
 * external_id and the timestamps; `audience` lists an audience's members (SPEC 10.2).
 */
export class ListPeopleQuery extends PagedQuery {
  static override readonly orderingFields = ['id', 'external_id', 'created_at', 'updated_at'] as const;

  @ExactTextFilter({ maxLength: MAX_EXTERNAL_ID_LENGTH, description: 'The person with exactly this external_id (at most one).' })
  external_id?: string;

  @IdFilter({ description: 'Only the members of this audience.' })
  audience?: number;
}
