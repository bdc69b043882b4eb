import { Injectable } from '../common/nest/light.js';
import { DataSource, Equal } from 'typeorm';
import { ApiError } from '../common/errors/api-error.js';
import { Customer } from './customer.entity.js';

@Injectable()
export class CustomersService {
  constructor(private readonly dataSource: DataSource) {}

  async create(name: string): Promise<Customer> {
    const trimmed = name.trim();
    if (trimmed.length < 1 || trimmed.length > 255) throw ApiError.field('name', 'Must be 1 to 255 characters.');
    return this.dataSource.getRepository(Customer).save({ name: trimmed });
  }

  async exists(id: number): Promise<boolean> {
    return this.dataSource.getRepository(Customer).existsBy({ id: Equal(id) });
  }
}
