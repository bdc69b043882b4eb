import { Inject, Injectable, Optional } from '@nestjs/common';
import { type CredentialCache, publishInvalidation } from '../common/credential-cache/credential-cache.js';
import { CREDENTIAL_CACHE } from '../common/credential-cache/credential-cache.token.js';
import { ApiError, type FieldErrors } from '../common/errors/api-error.js';
import { CustomersRepository } from '../customers/customers.repository.js';
import { Transactions } from '../common/tenancy/transactions.js';
import { PasswordHasher } from './password-hasher.js';
import { USER_ROLES, type UserRole } from '../common/access/user-role.js';
import type { User } from './user.entity.js';
import { UsersRepository } from './users.repository.js';

export interface NewUser {
  customerId: number;
  email: string;
  password: string;
  role?: UserRole;
}

/** A plain, deliberately simple check: the real proof of an address is the mail it receives. */
const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/;
export const MIN_PASSWORD_LENGTH = 8;

@Injectable()
export class UsersService {
  constructor(
    private readonly users: UsersRepository,
    private readonly customers: CustomersRepository,
    private readonly transactions: Transactions,
    private readonly hasher: PasswordHasher,
    @Optional() @Inject(CREDENTIAL_CACHE) private readonly cache?: CredentialCache,
  ) {}

  async create({ customerId, email, password, role = 'viewer' }: NewUser): Promise<User> {
    const errors: FieldErrors = {};
    const address = email.trim();
    if (!EMAIL.test(address) || address.length > 254) errors.email = ['Enter a valid email address.'];
    if (password.length < MIN_PASSWORD_LENGTH || password.length > 1024) {
      errors.password = [`Must be ${MIN_PASSWORD_LENGTH} to 1024 characters.`];
    }
    if (!USER_ROLES.includes(role)) errors.role = [`Must be one of ${USER_ROLES.join(', ')}.`];
    if (Object.keys(errors).length > 0) throw ApiError.validation(errors);

    if (!(await this.customers.exists(customerId))) {
      throw ApiError.field('customer', `Customer ${customerId} does not exist.`);
    }
    if (await this.findByEmail(address)) throw ApiError.field('email', 'A user with this email already exists.');
    const passwordHash = await this.hasher.hash(password);
    try {
      return await this.users.insert({ customerId, email: address, passwordHash, role, isActive: true });
    } catch (error) {
      // Two creations racing for one address: the unique index decides.
      if ((error as { code?: string }).code === '23505') throw ApiError.field('email', 'A user with this email already exists.');
      throw error;
    }
  }

  /** Case-insensitive, served by the unique index on lower(email). */
  findByEmail(email: string): Promise<User | null> {
    return this.users.findByEmail(email.trim());
  }

  findById(id: number): Promise<User | null> {
    return this.users.findById(id);
  }

  /**
   * Deactivates a user; every token of theirs stops working at once: the change is announced on
   * the credential-invalidation channel in the same transaction, so every server evicts its cache.
   */
  async deactivate(email: string): Promise<User> {
    const user = await this.findByEmail(email);
    if (!user) throw ApiError.notFound(`No user with email ${email.trim()}.`);
    if (user.isActive) {
      user.isActive = false;
      await this.transactions.run(async (transaction) => {
        await this.users.deactivate(user.id, transaction);
        await publishInvalidation(transaction, `user:${user.id}`);
      });
      // This process evicts at once; the others on NOTIFY.
      this.cache?.invalidate(`user:${user.id}`);
    }
    return user;
  }
}
