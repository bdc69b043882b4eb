import { MAX_LIST_VALUES, RULE_MESSAGES, rulesErrors } from './audience-rules.js';

describe('rulesErrors (SPEC 10.2 grammar)', () => {
  it('accepts the empty tree, every op and nested branches', () => {
    expect(rulesErrors({})).toEqual({});
    expect(
      rulesErrors({
        all: [
          { trait: 'plan', op: 'eq', value: 'pro' },
          { trait: 'ltv', op: 'gte', value: 100 },
          { trait: 'signup', op: 'lt', value: '2026-01-01' },
          { trait: 'vip', op: 'neq', value: true },
          { trait: 'country', op: 'in', value: ['DE', 'FR'] },
          { trait: 'tier', op: 'not_in', value: [1, 2] },
          { trait: 'city', op: 'contains', value: 'berg' },
          { trait: 'churned', op: 'exists' },
          { any: [{ trait: 'x.y-z_1', op: 'not_exists' }, { not: { consent: 'ad_personalization', op: 'eq', value: 'granted' } }] },
          { consent: 'ad_user_data', op: 'in', value: ['granted', 'unspecified'] },
        ],
      }),
    ).toEqual({});
  });

  it('reports every error at once, under its path', () => {
    expect(
      rulesErrors({
        all: [
          { trait: 'plan', op: 'eq', value: 'pro' },
          { trait: 'plan', op: 'like', value: 'p%' },
          { trait: 'bad key!', op: 'exists', value: 1 },
          { any: [] },
          { not: { trait: 'ltv', op: 'gt', value: true } },
          { consent: 'email', op: 'contains', value: 'x' },
          { trait: 'a', op: 'in', value: ['x', 2] },
          { trait: 'a', op: 'in', value: [{}, 'x'] },
          { trait: 'a', op: 'eq', value: 'x', extra: 1 },
          { all: [{ trait: 'a', op: 'eq' }], any: [] },
        ],
      }),
    ).toEqual({
      'all.1.op': [RULE_MESSAGES.op(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'contains', 'exists', 'not_exists'])],
      'all.2.trait': [RULE_MESSAGES.traitName],
      'all.2.value': [RULE_MESSAGES.noValue],
      'all.3.any': [RULE_MESSAGES.notList],
      'all.4.not.value': [RULE_MESSAGES.ordered],
      'all.5.consent': [RULE_MESSAGES.consentKind],
      'all.5.op': [RULE_MESSAGES.op(['eq', 'neq', 'in', 'not_in'])],
      'all.6.value': [RULE_MESSAGES.mixed],
      'all.7.value.0': [RULE_MESSAGES.scalar],
      'all.8.extra': [RULE_MESSAGES.unknownKey],
      'all.9': [RULE_MESSAGES.oneBranch],
    });
  });

  it('refuses what is not a tree, and lists out of bounds', () => {
    expect(rulesErrors([])).toEqual({ '': [RULE_MESSAGES.notObject] });
    expect(rulesErrors({ country: 'DE' })).toEqual({ '': [RULE_MESSAGES.oneBranch] });
    expect(rulesErrors({ trait: 'a', op: 'in', value: [] })).toEqual({ value: [RULE_MESSAGES.list] });
    const many = Array.from({ length: MAX_LIST_VALUES + 1 }, (_, index) => index);
    expect(rulesErrors({ trait: 'a', op: 'in', value: many })).toEqual({ value: [RULE_MESSAGES.list] });
    expect(rulesErrors({ trait: 'a', op: 'in', value: many.slice(1) })).toEqual({});
    expect(rulesErrors({ trait: 'a', op: 'eq', value: Number.NaN })).toEqual({ value: [RULE_MESSAGES.scalar] });
    expect(rulesErrors({ trait: 'a', op: 'eq', value: 'x'.repeat(1001) })).toEqual({ value: [RULE_MESSAGES.tooLong] });
    expect(rulesErrors({ any: Array.from({ length: 201 }, () => ({ trait: 'a', op: 'exists' })) })).toEqual({
      '': [RULE_MESSAGES.tooMany],
    });
  });
});
