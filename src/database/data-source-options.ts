import { NumericGeneratedIds } from './numeric-generated-ids.js';
import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from './migrations/index.js';
import { PreparingClient } from './prepared-statements.js';

export interface DatabaseOptions {
  url: string;
  poolSize?: number;
  /** Name the connections in pg_stat_activity. */
  applicationName?: string;
  /** Send the statements marked by `prepared()` as named prepared statements (DATABASE_PREPARED_STATEMENTS). */
  preparedStatements?: boolean;
  /**
   * The entities of a DataSource built outside Nest (the root's orm-entities.ts); the
   * application's own leaves this out and lets each feature module register its entities.
   */
  entities?: DataSourceOptions['entities'];
}

/** The one place that says how we talk to PostgreSQL; the server, the CLI, ormconfig.ts and the tests all use it. */
export function dataSourceOptions({
  url,
  poolSize = 10,
  applicationName = 'audience-platform',
  preparedStatements = true,
  entities = [],
}: DatabaseOptions): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    // Ids are bigint (int8): read them as numbers, exact below 2^53 (docs/scale-out.md), as the API shows them.
    parseInt8: true,
    subscribers: [NumericGeneratedIds],
    entities,
    migrations: MIGRATIONS,
    migrationsTableName: 'typeorm_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    applicationName,
    poolSize,
    extra: {
      // Fail fast when the database is unreachable, so /readyz answers 503 instead of hanging.
      connectionTimeoutMillis: 3000,
      idleTimeoutMillis: 30_000,
      ...(preparedStatements ? { Client: PreparingClient } : {}),
    },
  };
}
