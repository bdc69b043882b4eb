import type { ConsentLeaf, RuleNode, Scalar, TraitLeaf } from './audience-rules.js';

/** A rules tree as a WHERE condition over `people p`, with its parameters. */
export interface CompiledRules {
  readonly sql: string;
  readonly parameters: unknown[];
}

/** The SQL operator of each ordered comparison; code, never input. */
const ORDERED = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
const CONSENT_COLUMNS = { ad_user_data: 'p.consent_ad_user_data', ad_personalization: 'p.consent_ad_personalization' } as const;

/**
 * Compiles a tree that `rulesErrors` accepted into a condition on `people p` (SPEC 10.2). Every
 * value is a parameter, numbered from `firstParameter`; trait names are parameters too, so the
 * text depends on the tree's shape only. Each condition is true or false, never NULL, so `not`
 * inverts exactly: a missing trait matches only `not_exists`, and a trait of another type than
 * the value matches nothing (comparisons are of jsonb values, which carry their type).
 */
export function compileRules(rules: RuleNode | Record<string, never>, firstParameter: number): CompiledRules {
  const parameters: unknown[] = [];
  const bind = (value: unknown) => {
    parameters.push(value);
    return `$${firstParameter + parameters.length - 1}`;
  };
  const node = (tree: RuleNode): string => {
    if ('all' in tree) return `(${tree.all.map(node).join(' AND ')})`;
    if ('any' in tree) return `(${tree.any.map(node).join(' OR ')})`;
    if ('not' in tree) return `(NOT ${node(tree.not)})`;
    if ('consent' in tree) return consentLeaf(tree, bind);
    return traitLeaf(tree, bind);
  };
  if (Object.keys(rules).length === 0) return { sql: 'false', parameters };
  return { sql: node(rules as RuleNode), parameters };
}

function traitLeaf(leaf: TraitLeaf, bind: (value: unknown) => string): string {
  const key = bind(leaf.trait);
  const trait = `(p.traits -> ${key}::text)`;
  const typed = (value: Scalar | readonly Scalar[] | undefined) =>
    `jsonb_typeof(${trait}) = '${jsonType(Array.isArray(value) ? (value as Scalar[])[0] : (value as Scalar))}'`;
  switch (leaf.op) {
    case 'exists':
      return `(p.traits ? ${key}::text)`;
    case 'not_exists':
      return `(NOT p.traits ? ${key}::text)`;
    case 'eq':
      // Containment: typed by JSON itself ("5" is not 5), and what a GIN index on traits serves.
      return `(p.traits @> jsonb_build_object(${key}::text, ${bind(JSON.stringify(leaf.value))}::jsonb))`;
    case 'neq':
      return `COALESCE(${typed(leaf.value)} AND ${trait} <> ${bind(JSON.stringify(leaf.value))}::jsonb, false)`;
    case 'in':
      return `COALESCE(${trait} = ANY(${bind(jsonList(leaf.value))}::jsonb[]), false)`;
    case 'not_in':
      return `COALESCE(${typed(leaf.value)} AND NOT ${trait} = ANY(${bind(jsonList(leaf.value))}::jsonb[]), false)`;
    case 'contains':
      return `COALESCE(jsonb_typeof(${trait}) = 'string' AND strpos(p.traits ->> ${key}::text, ${bind(leaf.value)}::text) > 0, false)`;
    default:
      return `COALESCE(${typed(leaf.value)} AND ${trait} ${ORDERED[leaf.op]} ${bind(JSON.stringify(leaf.value))}::jsonb, false)`;
  }
}

function consentLeaf(leaf: ConsentLeaf, bind: (value: unknown) => string): string {
  const column = CONSENT_COLUMNS[leaf.consent];
  switch (leaf.op) {
    case 'eq':
      return `(${column} = ${bind(leaf.value)}::text)`;
    case 'neq':
      return `(${column} <> ${bind(leaf.value)}::text)`;
    case 'in':
      return `(${column} = ANY(${bind(leaf.value)}::text[]))`;
    case 'not_in':
      return `(NOT ${column} = ANY(${bind(leaf.value)}::text[]))`;
  }
}

function jsonType(value: Scalar): 'string' | 'number' | 'boolean' {
  return typeof value as 'string' | 'number' | 'boolean';
}

function jsonList(value: TraitLeaf['value']): string[] {
  return (value as Scalar[]).map((item) => JSON.stringify(item));
}
