import type { FieldErrors } from '../../common/errors/api-error.js';

/**
 * The condition tree of a rules audience (SPEC 10.2): `{"all": [node, …]}`, `{"any": [node, …]}`,
 * `{"not": node}`, a trait leaf `{"trait", "op", "value"}` or a consent leaf `{"consent", "op",
 * "value"}`; `{}` at the top selects nobody. One reader checks a tree and reports every error at
 * once under its path (`all.2.op`), so the API answers `errors["rules.all.2.op"]`.
 */
export type RuleNode =
  { readonly all: readonly RuleNode[] } | { readonly any: readonly RuleNode[] } | { readonly not: RuleNode } | TraitLeaf | ConsentLeaf;

export type Scalar = string | number | boolean;

export const TRAIT_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'contains', 'exists', 'not_exists'] as const;
export type TraitOp = (typeof TRAIT_OPS)[number];
export const CONSENT_OPS = ['eq', 'neq', 'in', 'not_in'] as const;
export type ConsentOp = (typeof CONSENT_OPS)[number];
export const CONSENT_KINDS = ['ad_user_data', 'ad_personalization'] as const;
export type ConsentKind = (typeof CONSENT_KINDS)[number];
export const CONSENT_VALUES = ['granted', 'denied', 'unspecified'] as const;

export interface TraitLeaf {
  readonly trait: string;
  readonly op: TraitOp;
  readonly value?: Scalar | readonly Scalar[];
}

export interface ConsentLeaf {
  readonly consent: ConsentKind;
  readonly op: ConsentOp;
  readonly value: string | readonly string[];
}

/** `in` and `not_in` take at most this many values (SPEC 10.2). */
export const MAX_LIST_VALUES = 1000;
/** Conditions in one tree at most: each one is a clause of the recompute's WHERE. */
export const MAX_CONDITIONS = 200;
/** The same key rule as a person's traits (SPEC 10.1). */
const TRAIT_KEY = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_STRING = 1000;

const BRANCHES = ['all', 'any', 'not'] as const;
const LEAF_KEYS = new Set(['trait', 'consent', 'op', 'value']);

/** The messages a client reads under `errors["rules.…"]`. */
export const RULE_MESSAGES = {
  notObject: 'Must be an object: {"all": [...]}, {"any": [...]}, {"not": {...}} or a condition.',
  oneBranch: 'Use exactly one of "all", "any", "not", "trait" or "consent".',
  notList: 'Must be a non-empty list of conditions.',
  unknownKey: 'Unknown field.',
  traitName: 'Must be 1–64 characters of letters, digits, "_", "." or "-".',
  consentKind: `Must be one of: ${CONSENT_KINDS.join(', ')}.`,
  op: (ops: readonly string[]) => `Must be one of: ${ops.join(', ')}.`,
  noValue: 'Not allowed with this op.',
  required: 'This field is required.',
  scalar: 'Must be a string, a number or a boolean.',
  string: 'Must be a string.',
  ordered: 'Must be a number or a string.',
  list: `Must be a non-empty list of at most ${MAX_LIST_VALUES} values.`,
  mixed: 'Values of a list must be all strings, all numbers or all booleans.',
  consentValue: `Must be one of: ${CONSENT_VALUES.join(', ')}.`,
  tooLong: `Ensure this value has at most ${MAX_STRING} characters.`,
  tooMany: `A rules tree has at most ${MAX_CONDITIONS} conditions.`,
} as const;

/**
 * Every error in a rules tree, keyed by path below `rules` (`''` for the tree itself, `all.2.op`
 * for a leaf's op); empty when the tree follows the grammar. Linear in the tree's size.
 */
export function rulesErrors(rules: unknown): FieldErrors {
  const errors: FieldErrors = {};
  const add = (path: string, message: string): void => {
    (errors[path] ??= []).push(message);
  };
  if (!isObject(rules)) {
    add('', RULE_MESSAGES.notObject);
    return errors;
  }
  if (Object.keys(rules).length === 0) return errors;
  let conditions = 0;
  const visit = (node: unknown, path: string): void => {
    const at = (key: string) => (path ? `${path}.${key}` : key);
    if (!isObject(node)) return add(path, RULE_MESSAGES.notObject);
    const branches = BRANCHES.filter((key) => key in node);
    const leaf = 'trait' in node || 'consent' in node;
    if (branches.length + (leaf ? 1 : 0) !== 1 || ('trait' in node && 'consent' in node)) return add(path, RULE_MESSAGES.oneBranch);
    if (leaf) {
      conditions++;
      for (const key of Object.keys(node)) if (!LEAF_KEYS.has(key)) add(at(key), RULE_MESSAGES.unknownKey);
      return 'trait' in node ? checkTraitLeaf(node, at, add) : checkConsentLeaf(node, at, add);
    }
    const branch = branches[0];
    for (const key of Object.keys(node)) if (key !== branch) add(at(key), RULE_MESSAGES.unknownKey);
    const child = node[branch];
    if (branch === 'not') return visit(child, at('not'));
    if (!Array.isArray(child) || child.length === 0) return add(at(branch), RULE_MESSAGES.notList);
    child.forEach((item, index) => visit(item, at(`${branch}.${index}`)));
  };
  visit(rules, '');
  if (conditions > MAX_CONDITIONS) add('', RULE_MESSAGES.tooMany);
  return errors;
}

function checkTraitLeaf(node: Record<string, unknown>, at: (key: string) => string, add: (path: string, message: string) => void): void {
  if (typeof node.trait !== 'string' || !TRAIT_KEY.test(node.trait)) add(at('trait'), RULE_MESSAGES.traitName);
  const op = node.op;
  if (!TRAIT_OPS.includes(op as TraitOp)) return add(at('op'), RULE_MESSAGES.op(TRAIT_OPS));
  const value = node.value;
  const hasValue = 'value' in node;
  switch (op as TraitOp) {
    case 'exists':
    case 'not_exists':
      if (hasValue) add(at('value'), RULE_MESSAGES.noValue);
      return;
    case 'in':
    case 'not_in':
      return checkList(value, hasValue, at('value'), add, isScalar, RULE_MESSAGES.scalar);
    case 'contains':
      if (!hasValue) return add(at('value'), RULE_MESSAGES.required);
      if (typeof value !== 'string') return add(at('value'), RULE_MESSAGES.string);
      return checkLength(value, at('value'), add);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (!hasValue) return add(at('value'), RULE_MESSAGES.required);
      if (typeof value !== 'string' && !isNumber(value)) return add(at('value'), RULE_MESSAGES.ordered);
      return checkLength(value, at('value'), add);
    default:
      if (!hasValue) return add(at('value'), RULE_MESSAGES.required);
      if (!isScalar(value)) return add(at('value'), RULE_MESSAGES.scalar);
      return checkLength(value, at('value'), add);
  }
}

function checkConsentLeaf(node: Record<string, unknown>, at: (key: string) => string, add: (path: string, message: string) => void): void {
  if (!CONSENT_KINDS.includes(node.consent as ConsentKind)) add(at('consent'), RULE_MESSAGES.consentKind);
  if (!CONSENT_OPS.includes(node.op as ConsentOp)) return add(at('op'), RULE_MESSAGES.op(CONSENT_OPS));
  const isConsentValue = (value: unknown) => CONSENT_VALUES.includes(value as (typeof CONSENT_VALUES)[number]);
  if (node.op === 'in' || node.op === 'not_in')
    return checkList(node.value, 'value' in node, at('value'), add, isConsentValue, RULE_MESSAGES.consentValue);
  if (!('value' in node)) return add(at('value'), RULE_MESSAGES.required);
  if (!isConsentValue(node.value)) add(at('value'), RULE_MESSAGES.consentValue);
}

function checkList(
  value: unknown,
  hasValue: boolean,
  path: string,
  add: (path: string, message: string) => void,
  accepts: (item: unknown) => boolean,
  message: string,
): void {
  if (!hasValue) return add(path, RULE_MESSAGES.required);
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_LIST_VALUES) return add(path, RULE_MESSAGES.list);
  let bad = false;
  value.forEach((item, index) => {
    if (!accepts(item)) {
      add(`${path}.${index}`, message);
      bad = true;
    } else if (typeof item === 'string' && item.length > MAX_STRING) {
      add(`${path}.${index}`, RULE_MESSAGES.tooLong);
      bad = true;
    }
  });
  if (!bad && new Set(value.map((item) => typeof item)).size > 1) add(path, RULE_MESSAGES.mixed);
}

function checkLength(value: unknown, path: string, add: (path: string, message: string) => void): void {
  if (typeof value === 'string' && value.length > MAX_STRING) add(path, RULE_MESSAGES.tooLong);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isScalar(value: unknown): value is Scalar {
  return typeof value === 'string' || typeof value === 'boolean' || isNumber(value);
}
