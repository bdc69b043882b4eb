import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyKey } from './idempotency-key.entity.js';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';

/**
 * Global because `@Idempotent()` applies the interceptor with `@UseInterceptors`, and Nest builds
 * it in the context of whichever feature module owns the route: its repository must be
 * resolvable from every one of them without each importing this module.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([IdempotencyKey])],
  providers: [IdempotencyKeysRepository, IdempotencyInterceptor],
  exports: [IdempotencyKeysRepository, IdempotencyInterceptor],
})
export class IdempotencyModule {}
