import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
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
import { IdempotencyModule } from './idempotency/idempotency.module.js';
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
import { Transactions } from './common/tenancy/transactions.js';
import { HealthController } from './health/health.controller.js';
import { JobsModule } from './jobs/jobs.module.js';
import { LOGGER } from './logging/logger.token.js';
import { McpModule } from './mcp/mcp.module.js';
import { McpTokensModule } from './mcp-tokens/mcp-tokens.module.js';
import { Metrics } from './metrics/metrics.js';
import { ImportsModule } from './imports/imports.module.js';
import { PeopleModule } from './people/people.module.js';
import { MembershipsModule } from './memberships/memberships.module.js';
import { SyncsModule } from './syncs/syncs.module.js';
import { createRedis, REDIS, RedisShutdown } from './redis/redis.js';
import { SignalsModule } from './signals/signals.module.js';
import { SignalEventsModule } from './signal-events/signal-events.module.js';
import { UsersModule } from './users/users.module.js';
import { WebhooksApiModule } from './webhooks/webhooks.module.js';

export interface AppDependencies {
  /** `databaseUrl` must be set: main.ts resolves the embedded cluster's URL and migrates before the app starts. */
  config: AppConfig;
  logger: Logger;
  metrics: Metrics;
  clock: Clock;
  /** Methods per route path, filled by Fastify's onRoute hook: the filter's 405 + Allow. */
  methods: MethodIndex;
  /** Test hooks into the DataSource options (e.g. a query logger); production passes none. */
  dataSourceOverrides?: Partial<DataSourceOptions>;
  /**
   * False for audience-worker: no HTTP surfaces (the web interface, MCP, health routes), which
   * need the HTTP application; every feature module, and so every job handler, stays.
   */
  http?: boolean;
}

/**
 * The root module: process-wide dependencies provided globally, the DataSource (TypeORM, built
 * here from the configuration), the global filter and pipe, and the feature modules. The
 * guards are AuthModule's (APP_GUARD). The configuration, logger, metrics and clock come in as
 * values: main.ts and app.ts need them before the container exists (to migrate, and for the
 * Fastify hooks). What is built from them (Redis, the rate limiter, the credential cache, the
 * outage log) is built here, by factories, and the container closes what it opened.
 */
@Module({})
export class AppModule {
  static forRoot({ config, logger, metrics, clock, methods, dataSourceOverrides = {}, http = true }: AppDependencies): DynamicModule {
    const url = config.databaseUrl;
    if (!url) throw new Error('AppModule needs config.databaseUrl (main.ts resolves the embedded cluster first)');
    const shared = [
      { provide: APP_CONFIG, useValue: config },
      { provide: LOGGER, useValue: logger },
      { provide: Metrics, useValue: metrics },
      { provide: Clock, useValue: clock },
      { provide: MethodIndex, useValue: methods },
      { provide: REDIS, inject: [APP_CONFIG], useFactory: (settings: AppConfig) => createRedis(settings.redisUrl) },
      // One outage log for the process: the filter and the MCP endpoint share its 10 s windows.
      { provide: OutageLog, inject: [LOGGER, Clock], useFactory: (log: Logger, time: Clock) => new OutageLog(log, () => time.nowMs()) },
      {
        provide: RATE_LIMITER,
        inject: [REDIS, APP_CONFIG, Clock],
        useFactory: (redis: Redis | null, settings: AppConfig, time: Clock) =>
          redis ? new RedisRateLimiter(redis, `${settings.redisKeyPrefix}ratelimit:`) : new MemoryRateLimiter(time),
      },
      { provide: CREDENTIAL_CACHE, inject: [LOGGER], useFactory: (log: Logger) => new CredentialCache(url, log) },
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
              // Each feature module registers its own entities (TypeOrmModule.forFeature).
              autoLoadEntities: true,
              ...dataSourceOverrides,
            }) as TypeOrmModuleOptions,
        }),
        JobsModule,
        IdempotencyModule,
        CustomersModule,
        UsersModule,
        AuthModule,
        AudiencesModule,
        SignalsModule,
        AiModelInstancesModule,
        ConnectionsModule,
        PeopleModule,
        ImportsModule,
        MembershipsModule,
        SyncsModule,
        SignalEventsModule,
        WebhooksApiModule,
        ...(http ? [WebModule] : []),
        McpTokensModule,
        ...(http ? [McpModule] : []),
      ],
      controllers: http ? [HealthController] : [],
      providers: [
        ...shared,
        RedisShutdown,
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
