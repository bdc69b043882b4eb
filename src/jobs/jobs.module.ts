import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { JobQueueRepository } from './job-queue.repository.js';
import { JobWorker } from './job-worker.js';
import { Jobs } from './jobs.service.js';

/** The job engine (docs/architecture.md, "Jobs"): `Jobs` to enqueue anywhere, and this process's workers. */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [JobQueueRepository, Jobs, JobWorker],
  exports: [Jobs],
})
export class JobsModule {}
