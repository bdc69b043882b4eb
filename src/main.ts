import 'reflect-metadata';
import { closeGracefully, createApp } from './app.js';
import { ConfigError, loadConfig } from './config/app-config.js';
import { DataSource } from 'typeorm';
import { prepareDatabase } from './database/database.js';
import { seedDemoData } from './demo/demo-data.js';
import { ensureDemoWorkspace } from './demo/demo-workspace.js';
import { createLogger, logDestinationOf } from './logging/logger.js';
import { announceStart } from './logging/start-banner.js';
import { createRedis } from './redis/redis.js';

/** Asynchronous, batched log writes (src/logging/logger.ts); flushed on `exit`, so process.exit() loses no line. */
const logDestination = logDestinationOf(1);

/** `npm start`: configure, connect (embedded PostgreSQL by default), migrate, seed the demo once, serve, drain on SIGTERM. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config, logDestination);
  const database = await prepareDatabase(config, { log: (line) => logger.info(line) });
  logger.info({ database: database.embedded ? 'embedded' : 'DATABASE_URL' }, 'database ready, migrations applied');
  const redis = createRedis(config.redisUrl);
  const app = await createApp({ config: { ...config, databaseUrl: database.url }, logger, redis });
  await app.listen({ port: config.port, host: config.host });

  const demo = config.demoWorkspace ? await ensureDemoWorkspace(app.get(DataSource), config.dataDir) : undefined;
  if (demo?.created) {
    // Sample content on the first start only; a failure here must not stop the service.
    await seedDemoData(app, demo).catch((error: unknown) => logger.warn({ err: error }, 'demo sample data could not be created'));
  }
  announceStart(config, demo, logger, (text) => process.stdout.write(text));

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    // A backstop beyond the drain deadline, in case closing the pool itself hangs.
    const force = setTimeout(() => {
      logger.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 5000);
    force.unref();
    try {
      if (!(await closeGracefully(app, config.shutdownTimeoutMs)))
        logger.warn('requests still running at the shutdown deadline were cut off');
      redis?.disconnect();
      await database.close();
      logger.info('shutdown complete');
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`Failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
