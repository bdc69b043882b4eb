import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { TenantRepository } from '../common/tenancy/tenant-repository.js';
import { Connection } from './connection.entity.js';

/** All SQL about ad-platform connections. */
@Injectable()
export class ConnectionsRepository extends TenantRepository<Connection> {
  constructor(dataSource: DataSource) {
    super(dataSource, Connection, 'connection');
  }
}
