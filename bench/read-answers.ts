/**
 * The read scenarios' answers (the audience and signal lists, the signal detail), written once
 * for the ceiling (bench/ceiling.ts) and the floor (bench/floor.ts): the service's statements,
 * as test/sql/audiences.sql and test/sql/signals.sql show them (count and page in one statement,
 * a deferred join from offset 1,000), and the service's JSON, so PostgreSQL does the same work for
 * all three servers and the benchmark's equivalence check holds them to the same bytes. Each
 * server runs the statements its own way (`RunQuery`): the ceiling through pg, the floor through
 * TypeORM's DataSource, both as named prepared statements like the service's.
 */

/** Runs one statement with its parameters and answers its rows; named prepared by the caller's means. */
export type RunQuery = (sql: string, parameters: unknown[]) => Promise<Record<string, unknown>[]>;

/** A refusal with SPEC section 4's problem fields; each server writes it in its own way. */
export class BenchProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly errors?: Record<string, string[]>,
  ) {
    super(detail);
  }
}

const TOTAL = '__total';
const DEFERRED_JOIN_FROM_OFFSET = 1000;

const AUDIENCE_SELECT =
  `t."customer_id" AS "customerId", t."id" AS "id", t."created_at" AS "createdAt", t."updated_at" AS "updatedAt", t."name" AS "name", ` +
  `t."description" AS "description", t."source_type" AS "sourceType", t."rules" AS "rules", t."model_instance_id" AS "modelInstanceId", ` +
  `t."min_score" AS "minScore", t."status" AS "status", t."size" AS "size", t."members_updated_at" AS "membersUpdatedAt", ` +
  `ARRAY(SELECT link."connection_id" FROM "audience_connections" link WHERE link."customer_id" = t.customer_id AND link."audience_id" = t.id ORDER BY link."connection_id") AS "connectionIds"`;

const SIGNAL_COLUMNS_SELECT =
  `t."customer_id" AS "customerId", t."id" AS "id", t."created_at" AS "createdAt", t."updated_at" AS "updatedAt", t."name" AS "name", ` +
  `t."description" AS "description", t."signal_type" AS "signalType", t."status" AS "status", t."model_instance_id" AS "modelInstanceId", ` +
  `t."audience_id" AS "audienceId", t."connection_id" AS "connectionId", t."config" AS "config", t."status_reason" AS "statusReason"`;
const DELIVERY_OF_SIGNAL =
  `(SELECT json_build_object('received', d.received, 'pending', d.pending, 'delivered', d.delivered, 'failed', d.failed, ` +
  `'lastDeliveredAt', d.last_delivered_at, 'lastError', d.last_error) FROM signal_deliveries d WHERE d.customer_id = t.customer_id AND d.signal_id = t.id)`;
const SIGNAL_SELECT = `${SIGNAL_COLUMNS_SELECT}, ${DELIVERY_OF_SIGNAL} AS "delivery"`;

/** The service's reads of a signal around its writes: the row (under lock for a PATCH), then its delivery counts. */
export const SIGNAL_WRITE_STATEMENTS = {
  read: `SELECT ${SIGNAL_COLUMNS_SELECT} FROM "signals" t WHERE t.customer_id = $1 AND t."id" = $2`,
  forUpdate: `SELECT ${SIGNAL_COLUMNS_SELECT} FROM "signals" t WHERE t.customer_id = $1 AND t."id" = $2 FOR UPDATE`,
  delivery: `SELECT ${DELIVERY_OF_SIGNAL} AS delivery FROM signals t WHERE t.customer_id = $1 AND t.id = $2`,
};

/** The service's list statement for a table read by `customer_id` (and `status` when `byStatus`), ordered by id. */
function listStatement(table: 'audiences' | 'signals', select: string, byStatus: boolean, deferred: boolean): string {
  const where = byStatus ? `t.customer_id = $1 AND t."status" = $2` : 't.customer_id = $1';
  const limit = byStatus ? 'LIMIT $3 OFFSET $4' : 'LIMIT $2 OFFSET $3';
  const page = deferred
    ? `SELECT ${select} FROM "${table}" t JOIN (SELECT t."id" FROM "${table}" t WHERE ${where} ORDER BY t."id" DESC ${limit}) ids ON ids."id" = t."id" WHERE t.customer_id = $1`
    : `SELECT ${select} FROM "${table}" t WHERE ${where} ORDER BY t."id" DESC ${limit}`;
  const count = `SELECT coalesce(sum(count), 0) AS total FROM tenant_counts WHERE customer_id = $1 AND resource = '${table}'${byStatus ? ' AND status = $5' : ''}`;
  return `SELECT total.total AS "${TOTAL}", page.* FROM (${count}) total LEFT JOIN (${page}) page ON true ORDER BY page."id" DESC`;
}

/** Every statement the read scenarios send: the servers name each once, at start. */
export const READ_STATEMENTS = {
  audiences: listStatement('audiences', AUDIENCE_SELECT, false, false),
  audiencesDeep: listStatement('audiences', AUDIENCE_SELECT, false, true),
  signals: listStatement('signals', SIGNAL_SELECT, false, false),
  signalsDeep: listStatement('signals', SIGNAL_SELECT, false, true),
  signalsByStatus: listStatement('signals', SIGNAL_SELECT, true, false),
  signalsByStatusDeep: listStatement('signals', SIGNAL_SELECT, true, true),
  signalById: `SELECT ${SIGNAL_SELECT} FROM "signals" t WHERE t.customer_id = $1 AND t."id" = $2`,
};

const SIGNAL_ID = /^[1-9]\d{0,9}$/;

/** The read scenarios answered for `customerId`: the service's statements in, the service's JSON out. */
export class ReadAnswers {
  constructor(private readonly query: RunQuery) {}

  async listAudiences(customerId: number, url: URL) {
    const { page, pageSize } = pageOf(url);
    const offset = (page - 1) * pageSize;
    const sql = offset >= DEFERRED_JOIN_FROM_OFFSET ? READ_STATEMENTS.audiencesDeep : READ_STATEMENTS.audiences;
    const { rows, count } = listed(await this.query(sql, [customerId, pageSize, offset]));
    return envelope(url, page, pageSize, count, rows.map(audienceJson));
  }

  async listSignals(customerId: number, url: URL) {
    const { page, pageSize } = pageOf(url);
    const statusText = url.searchParams.get('status');
    const offset = (page - 1) * pageSize;
    const deep = offset >= DEFERRED_JOIN_FROM_OFFSET;
    let result: Record<string, unknown>[];
    if (statusText === null || statusText === '') {
      result = await this.query(deep ? READ_STATEMENTS.signalsDeep : READ_STATEMENTS.signals, [customerId, pageSize, offset]);
    } else {
      if (!/^[0-4]$/.test(statusText))
        throw new BenchProblem(400, 'validation_error', 'Some fields are invalid.', { status: ['Invalid choice.'] });
      const sql = deep ? READ_STATEMENTS.signalsByStatusDeep : READ_STATEMENTS.signalsByStatus;
      result = await this.query(sql, [customerId, Number(statusText), pageSize, offset, statusText]);
    }
    const { rows, count } = listed(result);
    return envelope(url, page, pageSize, count, rows.map(signalJson));
  }

  async getSignal(customerId: number, idText: string) {
    const rows = SIGNAL_ID.test(idText) ? await this.query(READ_STATEMENTS.signalById, [customerId, Number(idText)]) : [];
    if (rows[0] === undefined) throw new BenchProblem(404, 'not_found', 'Not found.');
    return signalJson(rows[0]);
  }
}

/** The count riding on every row; a page past the end is one row of NULLs carrying it. */
function listed(rows: Record<string, unknown>[]): { rows: Record<string, unknown>[]; count: number } {
  const first = rows[0];
  return { rows: first === undefined || first.id === null ? [] : rows, count: Number(first?.[TOTAL] ?? 0) };
}

function pageOf(url: URL): { page: number; pageSize: number } {
  const pageText = url.searchParams.get('page');
  const page = pageText === null ? 1 : /^\d{1,9}$/.test(pageText) ? Number(pageText) : 0;
  if (page < 1) throw new BenchProblem(404, 'not_found', 'Invalid page.');
  const sizeText = url.searchParams.get('page_size');
  // The benchmark never sends page_size; a bad one falls back to 20 here (the service answers 400).
  const size = sizeText !== null && /^\d{1,9}$/.test(sizeText) ? Number(sizeText) : 0;
  return { page, pageSize: size >= 1 ? Math.min(size, 100) : 20 };
}

/** SPEC section 4's envelope, built like the service's buildPage (absolute links keeping every other parameter). */
function envelope(url: URL, page: number, pageSize: number, count: number, results: unknown[]) {
  if (page > 1 && (page - 1) * pageSize >= count) throw new BenchProblem(404, 'not_found', 'Invalid page.');
  const linkTo = (target: number) => {
    const link = new URL(url);
    link.searchParams.set('page', String(target));
    return link.toString();
  };
  return { count, next: page * pageSize < count ? linkTo(page + 1) : null, previous: page > 1 ? linkTo(page - 1) : null, results };
}

const iso = (value: unknown) => (value === null || value === undefined ? null : new Date(value as string | Date).toISOString());

function audienceJson(row: Record<string, unknown>) {
  return {
    id: row.id,
    customer: row.customerId,
    name: row.name,
    description: row.description,
    source_type: row.sourceType,
    rules: row.rules,
    model_instance: row.modelInstanceId,
    min_score: row.minScore,
    // An int8[] comes back as strings (only scalar int8 is read as a number).
    connections: (row.connectionIds as string[]).map(Number),
    status: row.status,
    size: row.size,
    members_updated_at: iso(row.membersUpdatedAt),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

interface DeliveryJson {
  received: number | string;
  pending: number | string;
  delivered: number | string;
  failed: number | string;
  lastDeliveredAt: string | null;
  lastError: string | null;
}

/** A signal row as the service's JSON; a signal without events has no delivery row and counts zero. */
export function signalJson(row: Record<string, unknown>) {
  const delivery = row.delivery as DeliveryJson | null;
  return {
    id: row.id,
    customer: row.customerId,
    name: row.name,
    description: row.description,
    signal_type: row.signalType,
    status: row.status,
    model_instance: row.modelInstanceId,
    audience: row.audienceId,
    connection: row.connectionId,
    config: row.config,
    status_reason: row.statusReason ?? null,
    delivery: {
      received: Number(delivery?.received ?? 0),
      delivered: Number(delivery?.delivered ?? 0),
      failed: Number(delivery?.failed ?? 0),
      pending: Number(delivery?.pending ?? 0),
      last_delivered_at: delivery?.lastDeliveredAt ? iso(delivery.lastDeliveredAt) : null,
      last_error: delivery?.lastError ?? null,
    },
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}
