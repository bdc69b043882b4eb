import { type DynamicModule, Module, type Type } from '@nestjs/common';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { ClsService, ClsServiceManager } from 'nestjs-cls';
import type { Logger } from 'pino';
import { CredentialCache } from '../common/credential-cache/credential-cache.js';
import { CREDENTIAL_CACHE } from '../common/credential-cache/credential-cache.token.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { Transactions } from '../common/tenancy/transactions.js';
import { Clock } from '../common/time/clock.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { dataSourceOptions } from '../database/data-source-options.js';
import { JobQueueRepository } from '../jobs/job-queue.repository.js';
import { Jobs } from '../jobs/jobs.service.js';
import { LOGGER } from '../logging/logger.token.js';

export interface CliModuleOptions {
  config: AppConfig;
  /** The database the migrations were just applied to (openDatabase/prepareDatabase runs them first). */
  url: string;
  /** Writes to stderr: stdout carries the command's result alone. */
  logger: Logger;
  /** The feature modules this command needs, and only those: each one loaded costs start time. */
  features: Type[];
}

/**
 * The admin CLI's Nest container: the process-wide providers the feature modules expect (as
 * AppModule.forRoot gives the server), one pooled connection with each module registering its
 * own entities, and the feature modules of the command being run.
 */
@Module({})
export class CliModule {
  static forRoot({ config, url, logger, features }: CliModuleOptions): DynamicModule {
    const shared = [
      // A CLI run is over in a moment: it must not start the token sweep.
      { provide: APP_CONFIG, useValue: { ...config, adPlatforms: { ...config.adPlatforms, sweepIntervalSeconds: 0 } } },
      { provide: LOGGER, useValue: logger },
      { provide: Clock, useValue: new Clock() },
      // A cache that never listens checks every key in the database; running servers still hear the services' NOTIFY.
      { provide: CREDENTIAL_CACHE, useValue: new CredentialCache(undefined, logger) },
      { provide: ClsService, useValue: ClsServiceManager.getClsService() },
      { provide: TenantContext, useClass: TenantContext },
      { provide: Transactions, useClass: Transactions },
      // Enqueueing without workers: a command's writes may cause jobs (a webhook event), which the service's workers run.
      { provide: JobQueueRepository, useClass: JobQueueRepository },
      { provide: Jobs, useClass: Jobs },
    ];
    return {
      module: CliModule,
      global: true,
      imports: [
        TypeOrmModule.forRoot({
          ...dataSourceOptions({ url, poolSize: 1, applicationName: 'audience-admin' }),
          autoLoadEntities: true,
          // The migrations have just connected to this database: a failure now is not worth nine retries 3 s apart.
          retryAttempts: 0,
        } as TypeOrmModuleOptions),
        ...features,
      ],
      providers: shared,
      exports: shared.map((provider) => provider.provide),
    };
  }
}
