import 'reflect-metadata';
import { closeGracefully, createApp } from './app.js';
import { loadConfigOrExit, runProcess, stopOnSignals } from './common/process/process-lifecycle.js';
import { DataSource } from 'typeorm';
import { prepareDatabase } from './database/database.js';
import { seedDemoData } from './demo/demo-data.js';
import { ensureDemoWorkspace } from './demo/demo-workspace.js';
import { createLogger, logDestinationOf } from './logging/logger.js';
import { announceStart } from './demo/start-banner.js';

/** Asynchronous, batched log writes (src/logging/logger.ts); flushed on `exit`, so process.exit() loses no line. */
const logDestination = logDestinationOf(1);

/** `npm start`: configure, connect (embedded PostgreSQL by default), migrate, seed the demo once, serve, drain on SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config, logDestination);
  const database = await prepareDatabase(config, { log: (line) => logger.info(line) });
  logger.info({ database: database.embedded ? 'embedded' : 'DATABASE_URL' }, 'database ready, migrations applied');
  const app = await createApp({ config: { ...config, databaseUrl: database.url }, logger });
  await app.listen({ port: config.port, host: config.host });

  const demo = config.demoWorkspace ? await ensureDemoWorkspace(app.get(DataSource), config.dataDir) : undefined;
  if (demo?.created) {
    // Sample content on the first start only; a failure here must not stop the service.
    await seedDemoData(app, demo).catch((error: unknown) => logger.warn({ err: error }, 'demo sample data could not be created'));
  }
  // Through the log's own buffered stream, not straight to stdout: written past the lines still
  // waiting in it, the banner would come out before them and end up buried under the start-up log.
  announceStart(config, demo, logger, (text) => {
    logDestination.write(text);
    logDestination.flush();
  });

  stopOnSignals(logger, 'draining in-flight requests', config.shutdownTimeoutMs, async () => {
    if (!(await closeGracefully(app, config.shutdownTimeoutMs)))
      logger.warn('requests still running at the shutdown deadline were cut off');
    await database.close();
  });
}

runProcess(main);
