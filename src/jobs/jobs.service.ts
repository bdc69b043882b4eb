import { Inject, Injectable } from '@nestjs/common';
import type { Transaction } from '../common/tenancy/transactions.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.token.js';
import type { JobDefinition } from './job-definitions.js';
import { JobQueueRepository, type NewJob } from './job-queue.repository.js';

export interface EnqueueOptions {
  /** What the job is about (an audience, an audience × destination): required by keyed definitions. */
  key?: string;
  /** Not before then; for a coalesced job, the debounce (each enqueue moves it). */
  runAt?: Date;
  /** Overrides the definition's attempts. */
  maxAttempts?: number;
}

/**
 * The job `enqueue` adds for a definition: a keyed definition's key, scoped by the definition's
 * name, is its serial queue (one at a time per key) and its job key (one waiting per key). Without
 * `runAt` it may run at once. Exported for the benchmark's framework floor (bench/), which enqueues alike.
 */
export function newJob<Payload extends object>(definition: JobDefinition<Payload>, payload: Payload, options: EnqueueOptions = {}): NewJob {
  const keyed = definition.oneAtATimePerKey || definition.coalescePerKey;
  if (keyed && !options.key) throw new Error(`job ${definition.name} needs a key`);
  const scoped = keyed ? `${definition.name}:${options.key}` : null;
  return {
    name: definition.name,
    payload,
    serialQueue: definition.oneAtATimePerKey ? scoped : null,
    jobKey: definition.coalescePerKey ? scoped : null,
    runAt: options.runAt ?? null,
    maxAttempts: options.maxAttempts ?? definition.maxAttempts,
  };
}

/**
 * Enqueues jobs inside the caller's transaction (SPEC section 10.6): no committed change is ever
 * without its job, and a rolled-back one leaves none.
 */
@Injectable()
export class Jobs {
  constructor(
    private readonly queue: JobQueueRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  enqueue<Payload extends object>(
    transaction: Transaction,
    definition: JobDefinition<Payload>,
    payload: Payload,
    options: EnqueueOptions = {},
  ): Promise<string> {
    return this.queue.add(
      transaction,
      newJob(definition, payload, { ...options, runAt: options.runAt ?? this.debounced(definition) ?? undefined }),
    );
  }

  /** One job per payload of an unkeyed definition, in one statement (e.g. a webhook event's deliveries). */
  enqueueMany<Payload extends object>(
    transaction: Transaction,
    definition: JobDefinition<Payload>,
    payloads: readonly Payload[],
    options: Omit<EnqueueOptions, 'key'> = {},
  ): Promise<string[]> {
    if (definition.oneAtATimePerKey || definition.coalescePerKey) throw new Error(`job ${definition.name} is keyed: enqueue one at a time`);
    return this.queue.addMany(
      transaction,
      {
        name: definition.name,
        serialQueue: null,
        jobKey: null,
        runAt: options.runAt ?? this.debounced(definition),
        maxAttempts: options.maxAttempts ?? definition.maxAttempts,
      },
      payloads,
    );
  }

  private debounced(definition: JobDefinition): Date | null {
    const seconds = definition.debounceSeconds?.(this.config) ?? 0;
    return seconds > 0 ? new Date(Date.now() + seconds * 1000) : null;
  }
}
