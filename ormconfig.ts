import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/app-config.js';
import { dataSourceOptions } from './src/database/data-source-options.js';
import { openEmbeddedDatabase } from './src/database/embedded-postgres.js';
import { ENTITIES } from './orm-entities.js';

/**
 * The DataSource of the TypeORM migration CLI (`npm run migration:generate`, `migration:show`).
 * It reaches the same database as the server: DATABASE_URL, else the embedded cluster.
 */
const config = loadConfig();
const url = config.databaseUrl ?? (await openEmbeddedDatabase(config.dataDir)).url;

export default new DataSource(dataSourceOptions({ url, applicationName: 'audience-platform-migrations', entities: ENTITIES }));
