import type { AudienceStatus } from './audience.entity.js';

/** SPEC section 3: draft → active, draft/active → archived; archived is final. */
const ALLOWED: Record<AudienceStatus, readonly AudienceStatus[]> = {
  draft: ['active', 'archived'],
  active: ['archived'],
  archived: [],
};

/** Why `from → to` is refused, or undefined when it is allowed (staying put always is). */
export function audienceTransitionError(from: AudienceStatus, to: AudienceStatus): string | undefined {
  if (from === to || ALLOWED[from].includes(to)) return undefined;
  if (from === 'archived') return 'An archived audience cannot change status.';
  return `Cannot change status from "${from}" to "${to}".`;
}
