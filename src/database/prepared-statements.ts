import pg from 'pg';

/**
 * The hot statements (list pages, reads by id) go to PostgreSQL as named prepared statements:
 * each connection parses and analyses such a statement once and from then on only binds and
 * executes it, and the server may keep one plan for it. Sent unnamed, the list statement costs
 * PostgreSQL 4× more per call on this project's benchmark (docs/benchmarks.md), most of it in
 * parsing and planning a 1 KB statement that never changes.
 *
 * Opt-in and bounded: only text passed through `prepared()` by code that builds a fixed set of
 * statements is named, never text built from a request, so every connection holds a few dozen
 * prepared statements at most. DATABASE_PREPARED_STATEMENTS=false turns the naming off, for a
 * connection pooler that cannot carry named statements between transactions (PgBouncer before
 * 1.21 in transaction mode).
 */
const MAX_PREPARED = 500;

const names = new Map<string, string>();

/** Marks a statement text to be sent as a named prepared statement; returns the same text. */
export function prepared(sql: string): string {
  if (!names.has(sql) && names.size < MAX_PREPARED) names.set(sql, `p${names.size + 1}`);
  return sql;
}

/**
 * The pool's client class (TypeORM passes `extra.Client` on to pg's Pool): a text marked by
 * `prepared()` with its values becomes `{ name, text, values }`. Everything else, TypeORM's
 * logging and error wrapping included, is unchanged, since TypeORM still sees the same text.
 */
export class PreparingClient extends pg.Client {
  override query = ((...args: unknown[]) => {
    const [text, values] = args;
    if (typeof text === 'string' && Array.isArray(values)) {
      const name = names.get(text);
      if (name !== undefined) args[0] = { name, text };
    }
    return (super.query as (...forwarded: unknown[]) => unknown).apply(this, args);
  }) as pg.Client['query'];
}
