#!/usr/bin/env node
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../app.module.js';
import { MethodIndex } from '../common/errors/method-index.js';
import { Clock } from '../common/time/clock.js';
import { loadConfigOrExit, runProcess, stopOnSignals } from '../common/process/process-lifecycle.js';
import { prepareDatabase } from '../database/database.js';
import { createLogger, logDestinationOf } from '../logging/logger.js';
import { NestPinoLogger } from '../logging/nest-logger.js';
import { Metrics } from '../metrics/metrics.js';
import { startWorkerMetricsServer } from './worker-metrics-server.js';

const logDestination = logDestinationOf(1);

/**
 * `audience-worker`: the job workers without the HTTP server (SPEC section 10.6), any number side
 * by side with API processes. The same modules as the server, so every @JobHandler is here.
 * SIGTERM: running jobs finish, then exit 0.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  if (config.jobs.workerConcurrency === 0) {
    process.stderr.write('WORKER_CONCURRENCY is 0: a worker process needs at least one worker.\n');
    process.exit(1);
  }
  const logger = createLogger(config, logDestination);
  const database = await prepareDatabase(config, { log: (line) => logger.info(line) });
  const metrics = new Metrics(() => undefined);
  const app = await NestFactory.createApplicationContext(
    AppModule.forRoot({
      config: { ...config, databaseUrl: database.url },
      logger,
      metrics,
      clock: new Clock(),
      methods: new MethodIndex(),
      http: false,
    }),
    { logger: new NestPinoLogger(logger), abortOnError: false },
  );
  await app.init();
  const port = config.jobs.workerMetricsPort;
  const metricsServer = port === undefined ? undefined : await startWorkerMetricsServer(config, metrics, port);
  logger.info({ concurrency: config.jobs.workerConcurrency, metrics_port: port ?? null }, 'audience-worker ready');

  stopOnSignals(logger, 'letting running jobs finish', config.shutdownTimeoutMs, async () => {
    metricsServer?.close();
    await app.close();
    await database.close();
  });
}

runProcess(main);
