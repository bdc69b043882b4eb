/**
 * The rules editor's model of an audience's condition tree (SPEC 10.2), and the two ways between
 * it and the JSON the API takes: `parseRules` reads a stored tree (or says it cannot), and
 * `serializeRules` writes exactly the grammar's JSON with, for every node, the paths its parts
 * have in that JSON, so an error the API answers under `rules.all.2.op` finds its row and field.
 *
 * The grammar's limits are the service's (src/audiences/rules/audience-rules.ts); they are read
 * again here only to tell a stored tree the editor can show from one that must be fixed as JSON.
 */

export const TRAIT_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'contains', 'exists', 'not_exists'] as const;
export type TraitOp = (typeof TRAIT_OPS)[number];
export const CONSENT_OPS = ['eq', 'neq', 'in', 'not_in'] as const;
export type ConsentOp = (typeof CONSENT_OPS)[number];
export const CONSENT_KINDS = ['ad_user_data', 'ad_personalization'] as const;
export type ConsentKind = (typeof CONSENT_KINDS)[number];
export const CONSENT_VALUES = ['granted', 'denied', 'unspecified'] as const;
export type ConsentValue = (typeof CONSENT_VALUES)[number];
export type ValueType = 'string' | 'number' | 'boolean';

/** A trait name as people's traits have them (SPEC 10.1). */
const TRAIT_KEY = /^[A-Za-z0-9_.-]{1,64}$/;

interface NodeBase {
  /** Stable across edits, so a row keeps its focus and its errors while others come and go. */
  key: string;
  /** Wrapped in `{"not": …}`. */
  negated: boolean;
}

export interface GroupNode extends NodeBase {
  kind: 'group';
  match: 'all' | 'any';
  children: RuleNode[];
}

export interface TraitNode extends NodeBase {
  kind: 'trait';
  trait: string;
  op: TraitOp;
  type: ValueType;
  /** The value as typed, for the ops that take one value. */
  value: string;
  /** The values of `in` and `not_in`, one a line as typed. */
  list: string;
}

export interface ConsentNode extends NodeBase {
  kind: 'consent';
  consent: ConsentKind;
  op: ConsentOp;
  value: ConsentValue;
  values: ConsentValue[];
}

export type RuleNode = GroupNode | TraitNode | ConsentNode;

let sequence = 0;
const nextKey = () => `rule-${++sequence}`;

export const isListOp = (op: TraitOp | ConsentOp) => op === 'in' || op === 'not_in';
export const takesNoValue = (op: TraitOp) => op === 'exists' || op === 'not_exists';

/** The value types an op compares with: `gt` orders numbers or strings, `contains` reads strings. */
export function typesFor(op: TraitOp): ValueType[] {
  if (takesNoValue(op)) return [];
  if (op === 'contains') return ['string'];
  if (op === 'gt' || op === 'gte' || op === 'lt' || op === 'lte') return ['number', 'string'];
  return ['string', 'number', 'boolean'];
}

export const emptyGroup = (match: 'all' | 'any' = 'all'): GroupNode => ({
  kind: 'group',
  key: nextKey(),
  negated: false,
  match,
  children: [],
});

export const newTraitCondition = (): TraitNode => ({
  kind: 'trait',
  key: nextKey(),
  negated: false,
  trait: '',
  op: 'eq',
  type: 'string',
  value: '',
  list: '',
});

export const newConsentCondition = (): ConsentNode => ({
  kind: 'consent',
  key: nextKey(),
  negated: false,
  consent: 'ad_personalization',
  op: 'eq',
  value: 'granted',
  values: ['granted'],
});

/** A trait condition with another op: its value type kept where the op compares with it, its typed value carried between one value and a list. */
export function withTraitOp(node: TraitNode, op: TraitOp): TraitNode {
  const types = typesFor(op);
  const type = types.includes(node.type) ? node.type : (types[0] ?? node.type);
  const value = isListOp(node.op) && !isListOp(op) ? (node.list.split('\n')[0] ?? '') : node.value;
  const list = !isListOp(node.op) && isListOp(op) && node.list.trim() === '' ? node.value : node.list;
  return { ...node, op, type, value: type === 'boolean' && value !== 'false' ? 'true' : value, list };
}

/** Every node of the tree, the root first. */
export function* nodesOf(node: RuleNode): Generator<RuleNode> {
  yield node;
  if (node.kind === 'group') for (const child of node.children) yield* nodesOf(child);
}

/** The tree with the node of `key` replaced (or removed, for null). */
export function replaceNode(root: GroupNode, key: string, next: RuleNode | null): GroupNode {
  const visit = (node: RuleNode): RuleNode | null => {
    if (node.key === key) return next;
    if (node.kind !== 'group') return node;
    const children = node.children.map(visit).filter((child): child is RuleNode => child !== null);
    return { ...node, children };
  };
  return visit(root) as GroupNode;
}

// Reading a stored tree.

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isScalar = (value: unknown): value is string | number | boolean =>
  typeof value === 'string' || typeof value === 'boolean' || isNumber(value);
const typeOf = (value: string | number | boolean): ValueType => typeof value as ValueType;
const hasOnly = (node: Record<string, unknown>, keys: string[]) => Object.keys(node).every((key) => keys.includes(key));

/**
 * The editor's tree for stored `rules`, or null when they do not follow the grammar (an audience
 * saved before it): those are shown as JSON, to be fixed there. The root is always a group; a
 * stored single condition becomes the one condition of an "all" group.
 */
export function parseRules(rules: unknown): GroupNode | null {
  if (!isObject(rules)) return null;
  if (Object.keys(rules).length === 0) return emptyGroup();
  const node = parseNode(rules, 1);
  if (!node) return null;
  if (node.kind === 'group' && !node.negated) return node;
  return { ...emptyGroup(), children: [node] };
}

function parseNode(node: unknown, depth: number): RuleNode | null {
  // The service refuses a tree nested deeper than 10 (SPEC section 3).
  if (!isObject(node) || depth > 10) return null;
  const keys = Object.keys(node);
  if (keys.length === 1 && keys[0] === 'not') {
    const inner = parseNode(node.not, depth + 1);
    return inner ? { ...inner, negated: !inner.negated } : null;
  }
  if (keys.length === 1 && (keys[0] === 'all' || keys[0] === 'any')) {
    const match = keys[0];
    const list = node[match];
    if (!Array.isArray(list) || list.length === 0) return null;
    const children = list.map((child) => parseNode(child, depth + 1));
    if (children.some((child) => child === null)) return null;
    return { ...emptyGroup(match), children: children as RuleNode[] };
  }
  if ('trait' in node && hasOnly(node, ['trait', 'op', 'value'])) return parseTrait(node);
  if ('consent' in node && hasOnly(node, ['consent', 'op', 'value'])) return parseConsent(node);
  return null;
}

function parseTrait(node: Record<string, unknown>): TraitNode | null {
  const { trait, op, value } = node;
  if (typeof trait !== 'string' || !TRAIT_KEY.test(trait) || !TRAIT_OPS.includes(op as TraitOp)) return null;
  const base = { ...newTraitCondition(), trait, op: op as TraitOp };
  if (takesNoValue(base.op)) return 'value' in node ? null : base;
  if (isListOp(base.op)) {
    if (!Array.isArray(value) || value.length === 0 || value.length > 1000 || !value.every(isScalar)) return null;
    const types = new Set(value.map(typeOf));
    if (types.size !== 1) return null;
    return { ...base, type: typeOf(value[0]), list: value.map(String).join('\n') };
  }
  if (!isScalar(value) || !typesFor(base.op).includes(typeOf(value))) return null;
  return { ...base, type: typeOf(value), value: String(value) };
}

function parseConsent(node: Record<string, unknown>): ConsentNode | null {
  const { consent, op, value } = node;
  const isValue = (item: unknown): item is ConsentValue => CONSENT_VALUES.includes(item as ConsentValue);
  if (!CONSENT_KINDS.includes(consent as ConsentKind) || !CONSENT_OPS.includes(op as ConsentOp)) return null;
  const base = { ...newConsentCondition(), consent: consent as ConsentKind, op: op as ConsentOp };
  if (isListOp(base.op)) {
    if (!Array.isArray(value) || value.length === 0 || !value.every(isValue)) return null;
    return { ...base, values: value, value: value[0]! };
  }
  return isValue(value) ? { ...base, value, values: [value] } : null;
}

// Writing the JSON.

export interface SerializedRules {
  json: Record<string, unknown>;
  /** Each node's paths in `json` ('' for the top, `all.2` for a row, `all.2.not` inside its negation), to its key. */
  paths: Map<string, string>;
  /** What cannot be sent as typed (a number that is not one), under `rules.<path>` like the API's errors. */
  errors: Record<string, string[]>;
}

/** The grammar's JSON for the tree: `{}` when it has no condition, else the root group with its conditions. */
export function serializeRules(root: GroupNode): SerializedRules {
  const paths = new Map<string, string>();
  const errors: Record<string, string[]> = {};
  if (root.children.length === 0) return { json: {}, paths: new Map([['', root.key]]), errors };

  const at = (path: string, key: string) => (path ? `${path}.${key}` : key);
  const visit = (node: RuleNode, path: string): Record<string, unknown> => {
    paths.set(path, node.key);
    if (node.negated) {
      paths.set(at(path, 'not'), node.key);
      return { not: inner(node, at(path, 'not')) };
    }
    return inner(node, path);
  };
  const inner = (node: RuleNode, path: string): Record<string, unknown> => {
    if (node.kind === 'group')
      return { [node.match]: node.children.map((child, index) => visit(child, at(path, `${node.match}.${index}`))) };
    if (node.kind === 'consent')
      return {
        consent: node.consent,
        op: node.op,
        value: isListOp(node.op) ? CONSENT_VALUES.filter((value) => node.values.includes(value)) : node.value,
      };
    if (takesNoValue(node.op)) return { trait: node.trait.trim(), op: node.op };
    const scalar = (text: string, valuePath: string) => {
      const value = typedValue(text, node.type);
      if (value === undefined)
        (errors[`rules.${valuePath}`] ??= []).push(node.type === 'number' ? 'Enter a number.' : 'Enter true or false.');
      return value ?? text;
    };
    const value = isListOp(node.op)
      ? listLines(node.list).map((line, index) => scalar(line, at(path, `value.${index}`)))
      : scalar(node.type === 'string' ? node.value : node.value.trim(), at(path, 'value'));
    return { trait: node.trait.trim(), op: node.op, value };
  };
  return { json: visit(root, ''), paths, errors };
}

/** The lines of a list of values, blank ones left out; a string keeps its spaces. */
export const listLines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

function typedValue(text: string, type: ValueType): string | number | boolean | undefined {
  if (type === 'string') return text;
  if (type === 'boolean') return text.trim() === 'true' ? true : text.trim() === 'false' ? false : undefined;
  const number = Number(text.trim());
  return text.trim() !== '' && Number.isFinite(number) ? number : undefined;
}

/**
 * The API's `rules.…` messages by node key and field ('' for the node itself, or trait, consent,
 * op, value), given the paths of the JSON they answer. A message on a list's item (`value.3`)
 * names its line. Messages on no node of the tree (`rules` itself) go to the root.
 */
export function errorsByNode(errors: Record<string, string[]> | undefined, paths: Map<string, string>, rootKey: string) {
  const found = new Map<string, Record<string, string[]>>();
  for (const [field, messages] of Object.entries(errors ?? {})) {
    if (field !== 'rules' && !field.startsWith('rules.')) continue;
    const path = field === 'rules' ? '' : field.slice('rules.'.length);
    let best = '';
    for (const candidate of paths.keys())
      if ((candidate === '' || path === candidate || path.startsWith(`${candidate}.`)) && candidate.length >= best.length) best = candidate;
    const key = paths.get(best) ?? rootKey;
    const rest = path.slice(best.length).replace(/^\./, '').split('.');
    const part = ['trait', 'consent', 'op', 'value'].includes(rest[0]!) ? rest[0]! : '';
    const line = part === 'value' && rest[1] !== undefined ? Number(rest[1]) + 1 : null;
    const entry = found.get(key) ?? {};
    (entry[part] ??= []).push(...messages.map((message) => (line === null ? message : `Line ${line}: ${message}`)));
    found.set(key, entry);
  }
  return found;
}
