import { PagedQuery } from '../../common/pagination/list-query.js';

/** `GET /api/v1/audiences/{id}/members/`: pages of people, ordered as the people list is. */
export class ListMembersQuery extends PagedQuery {
  static override readonly orderingFields = ['id', 'external_id', 'created_at', 'updated_at'] as const;
}
