import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Equal, type Repository } from 'typeorm';
import { EntityRepository } from '../common/tenancy/entity-repository.js';
import { Customer } from './customer.entity.js';
import { type Transaction } from '../common/tenancy/transactions.js';

/**
 * All SQL about customers (workspaces). Not a TenantRepository: a workspace is what a tenant is,
 * and it is looked up before any tenant context exists (CLI, user and key creation).
 */
@Injectable()
export class CustomersRepository extends EntityRepository<Customer> {
  constructor(@InjectRepository(Customer) customers: Repository<Customer>) {
    super(customers);
  }

  insert(name: string, transaction?: Transaction): Promise<Customer> {
    return this.managerOf(transaction).getRepository(Customer).save({ name });
  }

  exists(id: number, transaction?: Transaction): Promise<boolean> {
    return this.managerOf(transaction)
      .getRepository(Customer)
      .existsBy({ id: Equal(id) });
  }

  /** Whether the database holds any workspace at all (the demo workspace is made only when not). */
  async any(): Promise<boolean> {
    return (await this.repository.count()) > 0;
  }
}
