import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import { LOGGER } from '../logging/logger.token.js';
import { Metrics } from '../metrics/metrics.js';
import { JOBS, type JobDefinition } from './job-definitions.js';
import { JOB_HANDLER, type JobHandlerFunction } from './job-handler.decorator.js';
import { JobQueueRepository } from './job-queue.repository.js';
import { type JobRunner, type RegisteredJob, startJobRunner } from './job-runner.js';

/**
 * This process's workers: every @JobHandler method of every provider, run by WORKER_CONCURRENCY
 * workers (none: an API-only process, whose jobs other processes run). Stopped before the database
 * pool closes, after the running jobs finish.
 */
@Injectable()
export class JobWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private runner: JobRunner | undefined;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly metrics: Metrics,
    private readonly queue: JobQueueRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Every handler, by job name; two handlers for one name are a programming error. */
  handlers(): RegisteredJob[] {
    const found = new Map<string, RegisteredJob>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const target = (instance as Record<string, unknown>)[method];
        if (typeof target !== 'function') continue;
        const definition = this.reflector.get<JobDefinition | undefined>(JOB_HANDLER, target);
        if (!definition) continue;
        if (found.has(definition.name)) throw new Error(`two handlers for job ${definition.name}`);
        found.set(definition.name, { definition, handle: (target as JobHandlerFunction).bind(instance) });
      }
    }
    return [...found.values()];
  }

  async onApplicationBootstrap(): Promise<void> {
    this.watchQueueDepth();
    const { jobs: settings } = this.config;
    if (settings.workerConcurrency === 0) return;
    const jobs = this.handlers();
    const schedules = new Map<string, string>();
    for (const { definition } of jobs) {
      const line = definition.schedule?.(this.config);
      if (line) schedules.set(definition.name, line);
    }
    this.runner = await startJobRunner({
      databaseUrl: this.config.databaseUrl!,
      concurrency: settings.workerConcurrency,
      pollIntervalMs: settings.pollIntervalMs,
      rescueIntervalMs: settings.rescueIntervalSeconds * 1000,
      shutdownTimeoutMs: this.config.shutdownTimeoutMs,
      jobs,
      schedules,
      logger: this.logger,
      metrics: this.metrics,
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.metrics.watchJobQueues(undefined);
    await this.runner?.stop();
  }

  /**
   * job_queue_depth in every process, API-only ones included (where operators scrape): every queue
   * of JOBS at 0 when empty, and a job name JOBS does not know under `other`.
   */
  private watchQueueDepth(): void {
    const queueOf = new Map<string, string>(Object.values(JOBS).map((definition) => [definition.name, String(definition.queue)]));
    this.metrics.watchJobQueues(async () => {
      const depth = new Map([...queueOf.values()].map((queue) => [queue, 0]));
      for (const [task, count] of await this.queue.countsByTask()) {
        const queue = queueOf.get(task) ?? 'other';
        depth.set(queue, (depth.get(queue) ?? 0) + count);
      }
      return depth;
    });
  }
}
