import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import type { PageRequest } from '../common/pagination/pagination.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { type ListCondition, type ListResult, TenantRepository } from '../common/tenancy/tenant-repository.js';
import { Signal, SignalStatus, type SignalStatusCode, type SignalType } from './signal.entity.js';

export interface SignalFilters {
  status?: SignalStatusCode;
  signalType?: SignalType;
  modelInstanceId?: number;
  audienceId?: number;
  connectionId?: number;
  /** A LIKE pattern, already escaped. */
  search?: string;
}

/** All SQL about signals. */
@Injectable()
export class SignalsRepository extends TenantRepository<Signal> {
  constructor(@InjectRepository(Signal) signals: Repository<Signal>, tenants: TenantContext) {
    super(signals, tenants, 'signal');
  }

  /** Each filter is served by a (customer_id, …) index of the signals table. */
  list(filters: SignalFilters, request: PageRequest): Promise<ListResult<Signal>> {
    const conditions: ListCondition<Signal>[] = [];
    if (filters.status !== undefined) conditions.push({ property: 'status', operator: '=', value: filters.status });
    if (filters.signalType !== undefined) conditions.push({ property: 'signalType', operator: '=', value: filters.signalType });
    if (filters.modelInstanceId !== undefined)
      conditions.push({ property: 'modelInstanceId', operator: '=', value: filters.modelInstanceId });
    if (filters.audienceId !== undefined) conditions.push({ property: 'audienceId', operator: '=', value: filters.audienceId });
    if (filters.connectionId !== undefined) conditions.push({ property: 'connectionId', operator: '=', value: filters.connectionId });
    if (filters.search !== undefined) conditions.push({ property: 'name', operator: 'ILIKE', value: filters.search });
    return this.listPage(conditions, request);
  }

  /**
   * SPEC section 3: deleting a connection clears the connection of every signal that used it and
   * pauses those that were active. Runs in the caller's transaction; returns the signals touched.
   */
  /** A connection lost its grant: its active signals pause and keep the connection, to resume after a reconnect. */
  async pauseForConnection(connectionId: number, manager: EntityManager): Promise<number> {
    const result = await manager
      .createQueryBuilder()
      .update(Signal)
      .set({ status: SignalStatus.paused })
      .where('customer_id = :customerId AND connection_id = :connectionId AND status = :active', {
        customerId: this.tenant.customerId,
        connectionId,
        active: SignalStatus.active,
      })
      .execute();
    return result.affected ?? 0;
  }

  async detachConnection(connectionId: number, manager: EntityManager): Promise<number> {
    const result = await manager
      .createQueryBuilder()
      .update(Signal)
      .set({
        connectionId: null,
        status: () => `CASE WHEN status = ${SignalStatus.active} THEN ${SignalStatus.paused} ELSE status END`,
      })
      .where('customer_id = :customerId AND connection_id = :connectionId', { customerId: this.tenant.customerId, connectionId })
      .execute();
    return result.affected ?? 0;
  }
}
