import { PagedQuery } from '../../common/pagination/list-query.js';
import { ChoiceFilter, SearchFilter } from '../../common/validation/query-fields.js';
import { MODEL_STATUSES, MODEL_TYPES, type ModelStatus, type ModelType } from '../ai-model-instance.entity.js';

/** `GET /api/v1/ai-model-instances/` and the list_ai_model_instances tool (SPEC section 3). */
export class ListAiModelInstancesQuery extends PagedQuery {
  @ChoiceFilter(MODEL_STATUSES, { description: 'Only this status.' })
  status?: ModelStatus;

  @ChoiceFilter(MODEL_TYPES, { description: 'Only this model type.' })
  model_type?: ModelType;

  /** A LIKE pattern, already escaped. */
  @SearchFilter({ description: 'Name contains this text, ignoring letter case.' })
  search?: string;
}
