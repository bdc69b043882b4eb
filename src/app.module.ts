import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Redis } from 'ioredis';
import { ClsService, ClsServiceManager } from 'nestjs-cls';
import type { Logger } from 'pino';
import type { DataSourceOptions } from 'typeorm';
import { AiModelInstancesModule } from './ai-model-instances/ai-model-instances.module.js';
import { AudiencesModule } from './audiences/audiences.module.js';
import { AuthModule } from './auth/auth.module.js';
import { CredentialCache } from './common/credential-cache/credential-cache.js';
import { CREDENTIAL_CACHE } from './common/credential-cache/credential-cache.token.js';
import { MethodIndex } from './common/errors/method-index.js';
import { OutageLog } from './common/errors/outage-log.js';
import { ProblemDetailsFilter } from './common/errors/problem-details.filter.js';
import { IdempotencyModule } from './common/idempotency/idempotency.module.js';
import { MemoryRateLimiter, RedisRateLimiter } from './common/rate-limit/rate-limiter.js';
import { RATE_LIMITER } from './common/rate-limit/rate-limiter.token.js';
import { TenantContext } from './common/tenancy/tenant-context.js';
import { Clock } from './common/time/clock.js';
import { createValidationPipe } from './common/validation/validation-pipe.js';
import type { AppConfig } from './config/app-config.js';
import { APP_CONFIG } from './config/config.token.js';
import { ConnectionsModule } from './connections/connections.module.js';
import { WebModule } from './web/web.module.js';
import { CustomersModule } from './customers/customers.module.js';
import { DatabaseHealth } from './database/database-health.js';
import { dataSourceOptions } from './database/data-source-options.js';
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
  /** `databaseUrl` must be set: main.ts resolves the embedded cluster's URL and migrates before the app starts. */
  config: AppConfig;
  logger: Logger;
  metrics: Metrics;
  redis: Redis | null;
  clock: Clock;
  /** Methods per route path, filled by Fastify's onRoute hook: the filter's 405 + Allow. */
  methods: MethodIndex;
  /** Test hooks into the DataSource options (e.g. a query logger); production passes none. */
  dataSourceOverrides?: Partial<DataSourceOptions>;
}

/**
 * The root module: process-wide dependencies provided globally, the DataSource (TypeORM, built
 * here from the configuration), the global filter and pipe, and the feature modules. The
 * guards are AuthModule's (APP_GUARD).
 */
@Module({})
export class AppModule {
  static forRoot({ config, logger, metrics, redis, clock, methods, dataSourceOverrides = {} }: AppDependencies): DynamicModule {
    const url = config.databaseUrl;
    if (!url) throw new Error('AppModule needs config.databaseUrl (main.ts resolves the embedded cluster first)');
    const shared = [
      { provide: APP_CONFIG, useValue: config },
      { provide: LOGGER, useValue: logger },
      { provide: Metrics, useValue: metrics },
      { provide: REDIS, useValue: redis },
      { provide: Clock, useValue: clock },
      { provide: MethodIndex, useValue: methods },
      // One outage log for the process: the filter and the MCP endpoint share its 10 s windows.
      { provide: OutageLog, useValue: new OutageLog(logger, () => clock.nowMs()) },
      {
        provide: RATE_LIMITER,
        useValue: redis ? new RedisRateLimiter(redis, `${config.redisKeyPrefix}ratelimit:`) : new MemoryRateLimiter(clock),
      },
      { provide: CREDENTIAL_CACHE, useValue: new CredentialCache(url, logger) },
      // nestjs-cls's process-wide ClsService, provided directly: ClsModule.forRoot() would also
      // register a no-op APP_GUARD and a pass-through APP_INTERCEPTOR, and any global interceptor
      // puts every request through Nest's RxJS pipeline (measured: about 3% CPU per request).
      { provide: ClsService, useValue: ClsServiceManager.getClsService() },
      { provide: TenantContext, useClass: TenantContext },
      { provide: Transactions, useClass: Transactions },
      { provide: DatabaseHealth, useClass: DatabaseHealth },
    ];
    return {
      module: AppModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () =>
            ({
              ...dataSourceOptions({ url, poolSize: config.databasePoolSize, preparedStatements: config.databasePreparedStatements }),
              ...dataSourceOverrides,
            }) as DataSourceOptions,
        }),
        IdempotencyModule,
        CustomersModule,
        UsersModule,
        AuthModule,
        AudiencesModule,
        SignalsModule,
        AiModelInstancesModule,
        ConnectionsModule,
        WebModule,
        McpTokensModule,
        McpModule,
      ],
      controllers: [HealthController],
      providers: [
        ...shared,
        {
          provide: APP_FILTER,
          inject: [LOGGER, MethodIndex, OutageLog],
          useFactory: (log: Logger, index: MethodIndex, outages: OutageLog) => new ProblemDetailsFilter(log, index, outages),
        },
        { provide: APP_PIPE, useFactory: createValidationPipe },
      ],
      exports: shared.map((provider) => provider.provide),
    };
  }
}
