import { AUDIENCE_STATUSES, type AudienceStatus } from './audience.entity.js';
import { audienceTransitionError } from './audience-status.js';

describe('audience status transitions', () => {
  const allowed = new Set(['draft>active', 'draft>archived', 'active>archived']);

  it.each(AUDIENCE_STATUSES.flatMap((from) => AUDIENCE_STATUSES.map((to) => [from, to] as [AudienceStatus, AudienceStatus])))(
    '%s → %s',
    (from, to) => {
      const error = audienceTransitionError(from, to);
      if (from === to || allowed.has(`${from}>${to}`)) expect(error).toBeUndefined();
      else expect(error).toEqual(expect.any(String));
    },
  );
});
