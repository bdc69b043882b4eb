import { PagedQuery } from '../../common/pagination/list-query.js';
import { ChoiceFilter, IdFilter, SearchFilter } from '../../common/validation/query-fields.js';
import { CONNECTION_STATUSES, type ConnectionStatus, PLATFORMS, type Platform } from '../connection.entity.js';

/** `GET /api/v1/connections/` and the list_connections tool (SPEC section 3). */
export class ListConnectionsQuery extends PagedQuery {
  /** Anything but the caller's own workspace matches nothing (SPEC section 1). */
  @IdFilter({ description: 'Workspace id; any other than yours gives an empty page.' })
  customer?: number;

  @ChoiceFilter(PLATFORMS, { description: 'Only this ad platform.' })
  platform?: Platform;

  @ChoiceFilter(CONNECTION_STATUSES, { description: 'Only this status.' })
  status?: ConnectionStatus;

  /** A LIKE pattern, already escaped. The web interface's connection picker searches with it. */
  @SearchFilter({ description: 'Account name contains this text, ignoring letter case.' })
  search?: string;
}
