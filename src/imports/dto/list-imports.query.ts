import { PagedQuery } from '../../common/pagination/list-query.js';

/** `GET /api/v1/imports/` (SPEC 10.1): newest first by default; no filters. */
export class ListImportsQuery extends PagedQuery {
  static override readonly orderingFields = ['id', 'created_at', 'status'] as const;
}
