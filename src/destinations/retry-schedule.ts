import { randomInt } from 'node:crypto';
import type { DestinationFailure } from './destination-types.js';

/**
 * When a platform request that failed in a retryable way (SPEC 10.3 "Failures": 429, 5xx,
 * time-outs, Google RESOURCE_EXHAUSTED, Meta throttling codes) is tried again: after the
 * platform's own `Retry-After` when it gave one, else exponential backoff from
 * SYNC_RETRY_BASE_SECONDS (base, 2×base, 4×base, …) with ±50 % jitter so that workers throttled
 * together do not come back together; never longer than a day.
 */
export function retryDelaySeconds(
  failure: Extract<DestinationFailure, { kind: 'retryable' }>,
  attempt: number,
  baseSeconds: number,
  random: (max: number) => number = randomInt,
): number {
  if (failure.retryAfterSeconds !== null) return Math.min(failure.retryAfterSeconds, 86_400);
  const backoff = baseSeconds * 2 ** Math.max(0, attempt - 1);
  const jittered = backoff * (0.5 + random(1001) / 1000);
  return Math.min(Math.round(jittered * 1000) / 1000, 86_400);
}
