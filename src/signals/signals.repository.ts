import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Tenant } from '../common/tenancy/tenant.js';
import { TenantRepository } from '../common/tenancy/tenant-repository.js';
import { Signal, SignalStatus } from './signal.entity.js';

/** All SQL about signals. */
@Injectable()
export class SignalsRepository extends TenantRepository<Signal> {
  constructor(dataSource: DataSource) {
    super(dataSource, Signal, 'signal');
  }

  /**
   * SPEC section 3: deleting a connection clears the connection of every signal that used it and
   * pauses those that were active. Runs in the caller's transaction; returns the signals touched.
   */
  async detachConnection(tenant: Tenant, connectionId: number, manager: EntityManager): Promise<number> {
    const result = await manager
      .createQueryBuilder()
      .update(Signal)
      .set({
        connectionId: null,
        status: () => `CASE WHEN status = ${SignalStatus.active} THEN ${SignalStatus.paused} ELSE status END`,
      })
      .where('customer_id = :customerId AND connection_id = :connectionId', { customerId: tenant.customerId, connectionId })
      .execute();
    return result.affected ?? 0;
  }
}
