import type { ConnectionStatus } from '../connections/connection.entity.js';
import { SIGNAL_STATUS_CODES, SignalStatus, type SignalStatusCode } from './signal.entity.js';

/** SPEC section 3: 0→1, 1→2, 2→1, 3→1, any non-archived → 4; archived is final. */
const ALLOWED: Record<SignalStatusCode, readonly SignalStatusCode[]> = {
  [SignalStatus.draft]: [SignalStatus.active, SignalStatus.archived],
  [SignalStatus.active]: [SignalStatus.paused, SignalStatus.archived],
  [SignalStatus.paused]: [SignalStatus.active, SignalStatus.archived],
  [SignalStatus.failed]: [SignalStatus.active, SignalStatus.archived],
  [SignalStatus.archived]: [],
};

const NAMES = Object.fromEntries(Object.entries(SignalStatus).map(([name, code]) => [code, name])) as Record<SignalStatusCode, string>;

/** `1 (active)`: the integer code is what clients send, the name is what they understand. */
export function describeSignalStatus(code: SignalStatusCode): string {
  return `${code} (${NAMES[code]})`;
}

/** Why `from → to` is refused, or undefined when it is allowed (staying put always is). */
export function signalTransitionError(from: SignalStatusCode, to: SignalStatusCode): string | undefined {
  if (from === to || ALLOWED[from].includes(to)) return undefined;
  if (from === SignalStatus.archived) return 'An archived signal cannot change status.';
  return `Cannot change status from ${describeSignalStatus(from)} to ${describeSignalStatus(to)}.`;
}

/** A new signal starts as a draft, or anywhere a draft may go: creating is the transition 0 → status. */
export function signalCreationStatusError(status: SignalStatusCode): string | undefined {
  if (signalTransitionError(SignalStatus.draft, status) === undefined) return undefined;
  const allowed = SIGNAL_STATUS_CODES.filter((code) => signalTransitionError(SignalStatus.draft, code) === undefined);
  return `A signal cannot be created with status ${describeSignalStatus(status)}; choose one of ${allowed.map(describeSignalStatus).join(', ')}.`;
}

/**
 * Why a signal cannot be active with this connection, or undefined when it can. An active signal
 * feeds an ad platform, so it needs a working grant there (SPEC section 3). `connection` is the
 * workspace's connection with the signal's `connection` id, or null when there is none (also when
 * the id belongs to another workspace, which must read exactly like a missing one).
 */
export function signalActivationError(connection: { status: ConnectionStatus } | null): string | undefined {
  if (connection === null) return 'A signal needs an active connection to be activated.';
  if (connection.status !== 'active')
    return `A signal needs an active connection to be activated; this connection is "${connection.status}".`;
  return undefined;
}
