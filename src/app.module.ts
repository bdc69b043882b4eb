import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ClsModule } from 'nestjs-cls';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { AiModelInstancesModule } from './ai-model-instances/ai-model-instances.module.js';
import { AudiencesModule } from './audiences/audiences.module.js';
import { AuthModule } from './auth/auth.module.js';
import { CredentialCache } from './common/credential-cache/credential-cache.js';
import { CREDENTIAL_CACHE } from './common/credential-cache/credential-cache.token.js';
import { MemoryRateLimiter, RedisRateLimiter } from './common/rate-limit/rate-limiter.js';
import { RATE_LIMITER } from './common/rate-limit/rate-limiter.token.js';
import { TenantContext } from './common/tenancy/tenant-context.js';
import { Clock } from './common/time/clock.js';
import type { AppConfig } from './config/app-config.js';
import { APP_CONFIG } from './config/config.token.js';
import { ConnectionsModule } from './connections/connections.module.js';
import { Transactions } from './database/transactions.js';
import { HealthController } from './health/health.controller.js';
import { LOGGER } from './logging/logger.token.js';
import { McpModule } from './mcp/mcp.module.js';
import { McpTokensModule } from './mcp-tokens/mcp-tokens.module.js';
import { Metrics } from './metrics/metrics.js';
import { REDIS } from './redis/redis.js';
import { SignalsModule } from './signals/signals.module.js';
import { UsersModule } from './users/users.module.js';

export interface AppDependencies {
  config: AppConfig;
  /** Initialised and migrated by the caller (main.ts or a test), so the app never touches the schema. */
  dataSource: DataSource;
  logger: Logger;
  metrics: Metrics;
  redis: Redis | null;
  clock: Clock;
}

/** The root module: process-wide dependencies, provided globally, and the feature modules. */
@Module({})
export class AppModule {
  static forRoot({ config, dataSource, logger, metrics, redis, clock }: AppDependencies): DynamicModule {
    const shared = [
      { provide: APP_CONFIG, useValue: config },
      { provide: LOGGER, useValue: logger },
      { provide: Metrics, useValue: metrics },
      { provide: REDIS, useValue: redis },
      { provide: Clock, useValue: clock },
      {
        provide: RATE_LIMITER,
        useValue: redis ? new RedisRateLimiter(redis, `${config.redisKeyPrefix}ratelimit:`) : new MemoryRateLimiter(clock),
      },
      { provide: CREDENTIAL_CACHE, useValue: new CredentialCache((dataSource.options as { url?: string }).url, logger) },
      { provide: TenantContext, useClass: TenantContext },
      { provide: Transactions, useClass: Transactions },
    ];
    return {
      module: AppModule,
      global: true,
      imports: [
        ClsModule.forRoot({ global: true }),
        TypeOrmModule.forRootAsync({
          useFactory: () => dataSource.options,
          dataSourceFactory: async () => dataSource,
        }),
        UsersModule,
        AuthModule,
        AudiencesModule,
        SignalsModule,
        AiModelInstancesModule,
        ConnectionsModule,
        McpTokensModule,
        McpModule,
      ],
      controllers: [HealthController],
      providers: shared,
      exports: shared.map((provider) => provider.provide),
    };
  }
}
