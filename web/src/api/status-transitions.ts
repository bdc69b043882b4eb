/**
 * The status changes the pages offer, one table per resource. openapi.json states the transitions
 * only in prose (the status fields' descriptions), so they are kept here; each table is keyed by the
 * document's status type, so a status it lacks, or one it does not have, fails the web typecheck.
 */
import type { Audience, ModelInstance, Signal } from './types';

interface StatusMove<S> {
  to: S;
  label: string;
  /** Asks first: archiving is final. */
  confirm?: string;
}

type Table<S extends string | number> = Record<S, StatusMove<S>[]>;

const archive = <S>(to: S, noun: string): StatusMove<S> => ({
  to,
  label: 'Archive',
  confirm: `An archived ${noun} is final: it can never change again.`,
});

/** `draft` → `active`; `draft`/`active` → `archived`. */
export const AUDIENCE_TRANSITIONS = {
  draft: [{ to: 'active', label: 'Activate' }, archive('archived', 'audience')],
  active: [archive('archived', 'audience')],
  archived: [],
} satisfies Table<Audience['status']>;

/** `pending` → `training`; `training` → `ready`/`failed`; `ready`/`failed` → `training`; any → `archived`. */
export const MODEL_TRANSITIONS = {
  pending: [{ to: 'training', label: 'Start training' }, archive('archived', 'model')],
  training: [{ to: 'ready', label: 'Mark ready' }, { to: 'failed', label: 'Mark failed' }, archive('archived', 'model')],
  ready: [{ to: 'training', label: 'Retrain' }, archive('archived', 'model')],
  failed: [{ to: 'training', label: 'Retrain' }, archive('archived', 'model')],
  archived: [],
} satisfies Table<ModelInstance['status']>;

/** The signal status codes in words, as the document's description of `status` gives them. */
export const SIGNAL_STATUS_NAMES = {
  0: 'draft',
  1: 'active',
  2: 'paused',
  3: 'failed',
  4: 'archived',
} satisfies Record<Signal['status'], string>;

/** 0→1, 1→2, 2→1, 3→1, any but 4 → 4. */
export const SIGNAL_TRANSITIONS = {
  0: [{ to: 1, label: 'Activate' }, archive(4, 'signal')],
  1: [{ to: 2, label: 'Pause' }, archive(4, 'signal')],
  2: [{ to: 1, label: 'Resume' }, archive(4, 'signal')],
  3: [{ to: 1, label: 'Reactivate' }, archive(4, 'signal')],
  4: [],
} satisfies Table<Signal['status']>;
