import { Module } from '@nestjs/common';
import { ApiKeysService } from './api-keys.service.js';

/** Static API keys. No HTTP routes: keys are provisioned with the admin CLI only (SPEC section 2). */
@Module({
  providers: [ApiKeysService],
  exports: [ApiKeysService],
})
export class ApiKeysModule {}
