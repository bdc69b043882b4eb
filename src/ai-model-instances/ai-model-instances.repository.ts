import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { TenantRepository } from '../common/tenancy/tenant-repository.js';
import { AiModelInstance } from './ai-model-instance.entity.js';

/** All SQL about AI model instances. */
@Injectable()
export class AiModelInstancesRepository extends TenantRepository<AiModelInstance> {
  constructor(dataSource: DataSource) {
    super(dataSource, AiModelInstance, 'model');
  }
}
