import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { APP_CONFIG } from './config/config.token.js';
import type { AppConfig } from './config/app-config.js';
import { CustomersService } from './customers/customers.service.js';
import { HealthController } from './health/health.controller.js';
import { LOGGER } from './logging/logger.token.js';
import { Metrics } from './metrics/metrics.js';
import { REDIS } from './redis/redis.js';
import { PasswordHasher } from './users/password-hasher.js';
import { UsersService } from './users/users.service.js';

export interface AppDependencies {
  config: AppConfig;
  /** Initialised and migrated by the caller (main.ts or a test), so the app never touches the schema. */
  dataSource: DataSource;
  logger: Logger;
  metrics: Metrics;
  redis: Redis | null;
}

@Module({})
export class AppModule {
  static forRoot({ config, dataSource, logger, metrics, redis }: AppDependencies): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => dataSource.options,
          dataSourceFactory: async () => dataSource,
        }),
      ],
      controllers: [HealthController],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: Metrics, useValue: metrics },
        { provide: REDIS, useValue: redis },
        PasswordHasher,
        CustomersService,
        UsersService,
      ],
      exports: [APP_CONFIG, LOGGER, Metrics, REDIS, PasswordHasher, CustomersService, UsersService],
    };
  }
}
