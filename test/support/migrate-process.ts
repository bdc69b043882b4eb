import { openDatabase } from '../../src/database/database.js';

/**
 * One start's schema work, as `npm start` and audience-worker do it (openDatabase), in a process of
 * its own: test/concurrent-start.e2e-spec.ts runs several at once on one empty database.
 */
const database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: '', databasePoolSize: 2 });
await database.close();
process.stdout.write('migrated\n');
