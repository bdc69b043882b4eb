import { SetMetadata } from '@nestjs/common';
import type { JobDefinition } from './job-definitions.js';

export const JOB_HANDLER = Symbol('job-handler');

/** What a handler learns about the run it is in. */
export interface JobContext {
  readonly jobId: string;
  /** 1 on the first try. */
  readonly attempt: number;
  readonly maxAttempts: number;
}

export type JobHandlerFunction<Payload extends object = object> = (payload: Payload, context: JobContext) => Promise<void>;

/**
 * Ties a service method to a job (STYLE, "Background work"): `@JobHandler(JOBS.connectionSweep)`.
 * The method takes the payload and a JobContext; a throw fails the try and schedules a retry.
 */
export function JobHandler(definition: JobDefinition): MethodDecorator {
  return SetMetadata(JOB_HANDLER, definition);
}
