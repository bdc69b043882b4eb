import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { type DatabaseOptions, dataSourceOptions } from './data-source-options.js';
import { type EmbeddedDatabase, openEmbeddedDatabase } from './embedded-postgres.js';
import { installJobSchema } from './job-schema.js';
import { withMigrationLock } from './migration-lock.js';

export interface OpenDatabase {
  dataSource: DataSource;
  /** Set when running on the embedded cluster. */
  embedded: EmbeddedDatabase | undefined;
  /** Closes the pool, then stops the embedded cluster if this process started it. */
  close(): Promise<void>;
}

/**
 * Connects to DATABASE_URL, or to the embedded PostgreSQL when it is unset, and applies pending
 * migrations, then the job library's schema, under one advisory lock: the schema only ever changes
 * through them (SPEC section 9), one process at a time.
 */
export async function openDatabase(
  config: Pick<AppConfig, 'databaseUrl' | 'dataDir' | 'databasePoolSize'>,
  options: { applicationName?: string; poolSize?: number; log?: (line: string) => void; entities?: DatabaseOptions['entities'] } = {},
): Promise<OpenDatabase> {
  const embedded = config.databaseUrl ? undefined : await openEmbeddedDatabase(config.dataDir, options.log);
  const url = config.databaseUrl ?? embedded!.url;
  const dataSource = new DataSource(
    dataSourceOptions({
      url,
      poolSize: options.poolSize ?? config.databasePoolSize,
      applicationName: options.applicationName,
      entities: options.entities,
    }),
  );
  try {
    await dataSource.initialize();
    await withMigrationLock(url, async () => {
      await dataSource.runMigrations({ transaction: 'each' });
      await installJobSchema(url);
    });
  } catch (error) {
    if (dataSource.isInitialized) await dataSource.destroy();
    if (embedded?.owned) await embedded.stop();
    throw error;
  }
  return {
    dataSource,
    embedded,
    async close() {
      if (dataSource.isInitialized) await dataSource.destroy();
      if (embedded?.owned) await embedded.stop();
    },
  };
}

export interface PreparedDatabase {
  /** The URL the application's own pool (TypeOrmModule) connects to. */
  url: string;
  embedded: EmbeddedDatabase | undefined;
  /** Stops the embedded cluster if this process started it. */
  close(): Promise<void>;
}

/**
 * For the server: resolves the database (starting the embedded cluster when DATABASE_URL is
 * unset) and applies pending migrations over one short-lived connection. The application then
 * builds its own DataSource from the URL, inside Nest.
 */
export async function prepareDatabase(
  config: Pick<AppConfig, 'databaseUrl' | 'dataDir' | 'databasePoolSize'>,
  options: { log?: (line: string) => void } = {},
): Promise<PreparedDatabase> {
  const opened = await openDatabase(config, { ...options, poolSize: 1, applicationName: 'audience-platform-migrate' });
  await opened.dataSource.destroy();
  return { url: config.databaseUrl ?? opened.embedded!.url, embedded: opened.embedded, close: () => opened.close() };
}
