import { PagedQuery } from '../../common/pagination/list-query.js';
import { ChoiceFilter } from '../../common/validation/query-fields.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../webhook-delivery.entity.js';

/** `GET /api/v1/webhooks/`: a page of the workspace's endpoints, without filters. */
export class ListWebhooksQuery extends PagedQuery {
  static override readonly orderingFields = ['id', 'created_at', 'updated_at'] as const;
}

/** `GET /api/v1/webhooks/{id}/deliveries/`: newest first by default. */
export class ListWebhookDeliveriesQuery extends PagedQuery {
  static override readonly orderingFields = ['id', 'created_at'] as const;

  @ChoiceFilter(DELIVERY_STATUSES, { description: 'Only deliveries with this status.' })
  status?: DeliveryStatus;
}
