import { Inject, Injectable } from '@nestjs/common';
import { Transactions } from '../common/tenancy/transactions.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import type { Connection } from '../connections/connection.entity.js';
import { SyncMaintenanceRepository } from './sync-maintenance.repository.js';

/**
 * The shared request budgets of SPEC 10.3 ("requests to one ad account or Google project share one
 * rate budget across all workers"), for every caller of the platforms: sync runs and signal
 * deliveries draw from the same buckets, one for the deployment's Google Cloud project
 * (GOOGLE_REQUESTS_PER_MINUTE) and one per Meta ad account (META_REQUESTS_PER_MINUTE).
 */
@Injectable()
export class PlatformRateBudget {
  constructor(
    private readonly maintenance: SyncMaintenanceRepository,
    private readonly transactions: Transactions,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Books `count` requests to the connection's platform; answers the seconds to wait before sending them (0: at once). */
  take(connection: Pick<Connection, 'platform' | 'externalAccountId'>, count = 1): Promise<number> {
    const [scope, perMinute] =
      connection.platform === 'google_ads'
        ? ['google', this.config.sync.googleRequestsPerMinute]
        : [`meta:act_${connection.externalAccountId}`, this.config.sync.metaRequestsPerMinute];
    return this.transactions.run((transaction) => this.maintenance.takeRequests(transaction, scope, perMinute, Math.min(count, perMinute)));
  }
}
