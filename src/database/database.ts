import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './data-source-options.js';
import { type EmbeddedDatabase, openEmbeddedDatabase } from './embedded-postgres.js';

export interface OpenDatabase {
  dataSource: DataSource;
  /** Set when running on the embedded cluster. */
  embedded: EmbeddedDatabase | undefined;
  /** Closes the pool, then stops the embedded cluster if this process started it. */
  close(): Promise<void>;
}

/**
 * Connects to DATABASE_URL, or to the embedded PostgreSQL when it is unset, and applies pending
 * migrations: the schema only ever changes through them (SPEC section 9).
 */
export async function openDatabase(
  config: Pick<AppConfig, 'databaseUrl' | 'dataDir' | 'databasePoolSize'>,
  options: { applicationName?: string; poolSize?: number; log?: (line: string) => void } = {},
): Promise<OpenDatabase> {
  const embedded = config.databaseUrl ? undefined : await openEmbeddedDatabase(config.dataDir, options.log);
  const url = config.databaseUrl ?? embedded!.url;
  const dataSource = new DataSource(
    dataSourceOptions({ url, poolSize: options.poolSize ?? config.databasePoolSize, applicationName: options.applicationName }),
  );
  try {
    await dataSource.initialize();
    await dataSource.runMigrations({ transaction: 'each' });
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
