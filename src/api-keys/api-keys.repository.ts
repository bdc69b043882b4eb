import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Equal, type Repository } from 'typeorm';
import { EntityRepository } from '../common/tenancy/entity-repository.js';
import { ApiKey, type ApiKeyScope } from './api-key.entity.js';
import { type Transaction } from '../common/tenancy/transactions.js';

export interface NewApiKeyRow {
  customerId: number;
  name: string;
  prefix: string;
  keyHash: Buffer;
  scope: ApiKeyScope;
  expiresAt: Date | null;
}

/**
 * All SQL about API keys. Not a TenantRepository: a key is looked up by its prefix to learn its
 * workspace, and the operator CLI manages keys of any workspace, so ids are passed explicitly.
 * Every UPDATE still names the customer, so it is served by the (customer_id, id) primary key.
 */
@Injectable()
export class ApiKeysRepository extends EntityRepository<ApiKey> {
  constructor(@InjectRepository(ApiKey) apiKeys: Repository<ApiKey>) {
    super(apiKeys);
  }

  insert(values: NewApiKeyRow, transaction?: Transaction): Promise<ApiKey> {
    return this.managerOf(transaction).getRepository(ApiKey).save(values);
  }

  /** A workspace's keys, oldest first, revoked and expired ones included. */
  listByCustomer(customerId: number): Promise<ApiKey[]> {
    return this.repository.find({ where: { customerId: Equal(customerId) }, order: { id: 'ASC' } });
  }

  findById(id: number, transaction?: Transaction): Promise<ApiKey | null> {
    return this.managerOf(transaction)
      .getRepository(ApiKey)
      .findOneBy({ id: Equal(id) });
  }

  findByPrefix(prefix: string): Promise<ApiKey | null> {
    return this.repository.findOneBy({ prefix: Equal(prefix) });
  }

  async revoke(key: Pick<ApiKey, 'customerId' | 'id'>, revokedAt: Date, transaction?: Transaction): Promise<void> {
    await this.managerOf(transaction)
      .getRepository(ApiKey)
      .update({ customerId: Equal(key.customerId), id: Equal(key.id) }, { revokedAt });
  }

  /** Points a rotated key at its replacement and shortens its life to the grace period. */
  async markReplaced(
    key: Pick<ApiKey, 'customerId' | 'id'>,
    replacedById: number,
    expiresAt: Date | null,
    transaction?: Transaction,
  ): Promise<void> {
    await this.managerOf(transaction)
      .getRepository(ApiKey)
      .update({ customerId: Equal(key.customerId), id: Equal(key.id) }, { replacedById, expiresAt });
  }

  async recordUse(key: Pick<ApiKey, 'customerId' | 'id'>, at: Date): Promise<void> {
    await this.repository.update({ customerId: Equal(key.customerId), id: Equal(key.id) }, { lastUsedAt: at });
  }
}
