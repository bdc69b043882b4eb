import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import type { Customer } from './customer.entity.js';
import { CustomersRepository } from './customers.repository.js';

@Injectable()
export class CustomersService {
  constructor(private readonly customers: CustomersRepository) {}

  async create(name: string): Promise<Customer> {
    const trimmed = name.trim();
    if (trimmed.length < 1 || trimmed.length > 255) throw ApiError.field('name', 'Must be 1 to 255 characters.');
    return this.customers.insert(trimmed);
  }

  exists(id: number): Promise<boolean> {
    return this.customers.exists(id);
  }
}
