import { MODEL_STATUSES, type ModelStatus } from './ai-model-instance.entity.js';
import { modelTransitionError, startsTraining } from './model-status.js';

const pairs = MODEL_STATUSES.flatMap((from) => MODEL_STATUSES.map((to) => [from, to] as [ModelStatus, ModelStatus]));

describe('AI model instance status transitions', () => {
  const allowed = new Set([
    'pending>training',
    'training>ready',
    'training>failed',
    'ready>training',
    'failed>training',
    'pending>archived',
    'training>archived',
    'ready>archived',
    'failed>archived',
  ]);

  it.each(pairs)('%s → %s', (from, to) => {
    const error = modelTransitionError(from, to);
    if (from === to || allowed.has(`${from}>${to}`)) expect(error).toBeUndefined();
    else expect(error).toEqual(expect.any(String));
  });

  it('names archived as the reason when leaving it', () => {
    expect(modelTransitionError('archived', 'training')).toBe('An archived AI model instance cannot change status.');
  });

  it.each(pairs)('%s → %s starts training only when entering training', (from, to) => {
    expect(startsTraining(from, to)).toBe(to === 'training' && from !== 'training');
  });
});
