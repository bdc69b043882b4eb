import { PagedQuery } from '../../common/pagination/list-query.js';
import { ChoiceFilter, IdFilter, SearchFilter } from '../../common/validation/query-fields.js';
import { SIGNAL_STATUS_CODES, SIGNAL_TYPES, SignalStatus, type SignalStatusCode, type SignalType } from '../signal.entity.js';

/** `GET /api/v1/signals/` and the list_signals tool (SPEC section 3). */
export class ListSignalsQuery extends PagedQuery {
  @ChoiceFilter(SIGNAL_STATUS_CODES, {
    description: 'Only this status code: 0 draft, 1 active, 2 paused, 3 failed, 4 archived. Anything else → 400.',
    names: Object.keys(SignalStatus),
  })
  status?: SignalStatusCode;

  @ChoiceFilter(SIGNAL_TYPES, { description: 'Only this signal type.' })
  signal_type?: SignalType;

  @IdFilter({ description: 'Only signals fed by this AI model instance.' })
  model_instance?: number;

  @IdFilter({ description: 'Only signals for this audience.' })
  audience?: number;

  @IdFilter({ description: 'Only signals sent through this connection.' })
  connection?: number;

  /** A LIKE pattern, already escaped. */
  @SearchFilter({ description: 'Name contains this text, ignoring letter case.' })
  search?: string;
}
