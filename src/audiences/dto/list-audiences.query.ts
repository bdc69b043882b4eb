import { PagedQuery } from '../../common/pagination/list-query.js';
import { ChoiceFilter, IdFilter, SearchFilter } from '../../common/validation/query-fields.js';
import { AUDIENCE_STATUSES, type AudienceStatus, SOURCE_TYPES, type SourceType } from '../audience.entity.js';

/** `GET /api/v1/audiences/` and the list_audiences tool (SPEC section 3). */
export class ListAudiencesQuery extends PagedQuery {
  /** Anything but the caller's own workspace matches nothing (SPEC section 1). */
  @IdFilter({ description: 'Workspace id; any other than yours gives an empty page.' })
  customer?: number;

  @ChoiceFilter(AUDIENCE_STATUSES, { description: 'Only this status.' })
  status?: AudienceStatus;

  @ChoiceFilter(SOURCE_TYPES, { description: 'Only this source type.' })
  source_type?: SourceType;

  /** Which audiences keep a model instance from being deleted: the web interface links its 409 here. */
  @IdFilter({ description: 'Only audiences scored by this AI model instance.' })
  model_instance?: number;

  /** A LIKE pattern, already escaped. */
  @SearchFilter({ description: 'Name contains this text, ignoring letter case.' })
  search?: string;
}
