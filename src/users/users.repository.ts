import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, Equal, type Repository } from 'typeorm';
import { EntityRepository } from '../database/entity-repository.js';
import type { UserRole } from './user-role.js';
import { User } from './user.entity.js';

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

  insert(values: NewUserRow, manager?: EntityManager): Promise<User> {
    return this.managerOf(manager).getRepository(User).save(values);
  }

  /** Case-insensitive, served by the unique index on lower(email). */
  findByEmail(email: string, manager?: EntityManager): Promise<User | null> {
    return this.managerOf(manager)
      .getRepository(User)
      .createQueryBuilder('user')
      .where('lower(user.email) = lower(:email)', { email })
      .getOne();
  }

  findById(id: number, manager?: EntityManager): Promise<User | null> {
    return this.managerOf(manager)
      .getRepository(User)
      .findOneBy({ id: Equal(id) });
  }

  async deactivate(id: number, manager?: EntityManager): Promise<void> {
    await this.managerOf(manager)
      .getRepository(User)
      .update({ id: Equal(id) }, { isActive: false });
  }
}
