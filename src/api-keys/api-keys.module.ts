import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CustomersModule } from '../customers/customers.module.js';
import { ApiKey } from './api-key.entity.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeysService } from './api-keys.service.js';

/** Static API keys. No HTTP routes: keys are provisioned with the admin CLI only (SPEC section 2). */
@Module({
  imports: [TypeOrmModule.forFeature([ApiKey]), CustomersModule],
  providers: [ApiKeysRepository, ApiKeysService],
  exports: [ApiKeysService],
})
export class ApiKeysModule {}
