import { SIGNAL_STATUS_CODES, SignalStatus, type SignalStatusCode } from './signal.entity.js';
import { signalActivationError, signalCreationStatusError, signalTransitionError } from './signal-status.js';

describe('signal status transitions', () => {
  const allowed = new Set(['0>1', '1>2', '2>1', '3>1', '0>4', '1>4', '2>4', '3>4']);
  const pairs = SIGNAL_STATUS_CODES.flatMap((from) => SIGNAL_STATUS_CODES.map((to) => [from, to] as [SignalStatusCode, SignalStatusCode]));

  it('covers the whole 5×5 matrix', () => {
    expect(pairs).toHaveLength(25);
  });

  it.each(pairs)('%i → %i', (from, to) => {
    const error = signalTransitionError(from, to);
    if (from === to || allowed.has(`${from}>${to}`)) expect(error).toBeUndefined();
    else expect(error).toEqual(expect.any(String));
  });

  it('names both ends of a refused transition', () => {
    expect(signalTransitionError(SignalStatus.draft, SignalStatus.paused)).toBe('Cannot change status from 0 (draft) to 2 (paused).');
  });

  it('says that archived is final', () => {
    expect(signalTransitionError(SignalStatus.archived, SignalStatus.active)).toBe('An archived signal cannot change status.');
  });
});

describe('signal status on create', () => {
  it.each([
    [SignalStatus.draft, true],
    [SignalStatus.active, true],
    [SignalStatus.paused, false],
    [SignalStatus.failed, false],
    [SignalStatus.archived, true],
  ])('status %i allowed: %p', (status, ok) => {
    const error = signalCreationStatusError(status);
    if (ok) expect(error).toBeUndefined();
    else
      expect(error).toBe(
        `A signal cannot be created with status ${status} (${status === 2 ? 'paused' : 'failed'}); choose one of 0 (draft), 1 (active), 4 (archived).`,
      );
  });
});

describe('signal activation', () => {
  it('needs a connection', () => {
    expect(signalActivationError(null)).toBe('A signal needs an active connection to be activated.');
  });

  it.each(['expired', 'revoked', 'error'] as const)('refuses a connection that is %s', (status) => {
    expect(signalActivationError({ status })).toContain(`"${status}"`);
  });

  it('accepts an active connection', () => {
    expect(signalActivationError({ status: 'active' })).toBeUndefined();
  });
});
