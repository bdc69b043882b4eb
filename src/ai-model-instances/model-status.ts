import type { ModelStatus } from './ai-model-instance.entity.js';

/**
 * SPEC section 3: pending → training, training → ready/failed, ready/failed → training (retraining),
 * any → archived; archived is final.
 */
const ALLOWED: Record<ModelStatus, readonly ModelStatus[]> = {
  pending: ['training', 'archived'],
  training: ['ready', 'failed', 'archived'],
  ready: ['training', 'archived'],
  failed: ['training', 'archived'],
  archived: [],
};

/** Why `from → to` is refused, or undefined when it is allowed (staying put always is). */
export function modelTransitionError(from: ModelStatus, to: ModelStatus): string | undefined {
  if (from === to || ALLOWED[from].includes(to)) return undefined;
  if (from === 'archived') return 'An archived AI model instance cannot change status.';
  return `Cannot change status from "${from}" to "${to}".`;
}

/** `version` counts training runs: it moves on every entry into `training`, not while a run goes on. */
export function startsTraining(from: ModelStatus, to: ModelStatus): boolean {
  return to === 'training' && from !== 'training';
}
