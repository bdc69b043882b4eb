import { PagedQuery } from '../../common/pagination/list-query.js';
import { ChoiceFilter, IdFilter } from '../../common/validation/query-fields.js';
import { SYNC_STATUSES, type SyncStatus } from '../sync-run.entity.js';

/** `GET /api/v1/syncs/` and the list_syncs tool (SPEC 10.3): newest first by default. */
export class ListSyncsQuery extends PagedQuery {
  static override readonly orderingFields = ['id', 'created_at', 'status'] as const;

  @IdFilter({ description: 'Only runs of this audience.' })
  audience?: number;

  @IdFilter({ description: 'Only runs to this connection.' })
  connection?: number;

  @ChoiceFilter(SYNC_STATUSES, { description: 'Only runs in this status.' })
  status?: SyncStatus;
}
