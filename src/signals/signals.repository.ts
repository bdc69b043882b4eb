import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { TenantRepository } from '../common/tenancy/tenant-repository.js';
import { Signal } from './signal.entity.js';

/** All SQL about signals. */
@Injectable()
export class SignalsRepository extends TenantRepository<Signal> {
  constructor(dataSource: DataSource) {
    super(dataSource, Signal, 'signal');
  }
}
