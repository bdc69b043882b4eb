import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Equal, type Repository } from 'typeorm';
import { EntityRepository } from '../common/tenancy/entity-repository.js';
import type { UserRole } from '../common/access/user-role.js';
import { User } from './user.entity.js';
import { type Transaction } from '../common/tenancy/transactions.js';

export interface NewUserRow {
  customerId: number;
  email: string;
  passwordHash: string;
  role: UserRole;
  isActive: boolean;
}

/**
 * All SQL about users. Not a TenantRepository: a login finds its user by email before any
 * workspace is known, so every method takes the ids it needs explicitly.
 */
@Injectable()
export class UsersRepository extends EntityRepository<User> {
  constructor(@InjectRepository(User) users: Repository<User>) {
    super(users);
  }

  insert(values: NewUserRow, transaction?: Transaction): Promise<User> {
    return this.managerOf(transaction).getRepository(User).save(values);
  }

  /** Case-insensitive, served by the unique index on lower(email). */
  findByEmail(email: string, transaction?: Transaction): Promise<User | null> {
    return this.managerOf(transaction)
      .getRepository(User)
      .createQueryBuilder('user')
      .where('lower(user.email) = lower(:email)', { email })
      .getOne();
  }

  findById(id: number, transaction?: Transaction): Promise<User | null> {
    return this.managerOf(transaction)
      .getRepository(User)
      .findOneBy({ id: Equal(id) });
  }

  async deactivate(id: number, transaction?: Transaction): Promise<void> {
    await this.managerOf(transaction)
      .getRepository(User)
      .update({ id: Equal(id) }, { isActive: false });
  }
}
