/**
 * The signal columns as the service selects them (captured from it), the read by id, and the
 * JSON of one row: shared by the ceiling (bench/ceiling.ts) and the floor (bench/floor.ts), so
 * both send PostgreSQL the very statement the service sends and answer the same fields.
 */

export const SIGNAL_COLUMNS =
  `"signal"."customer_id" AS "signal_customer_id", "signal"."id" AS "signal_id", "signal"."created_at" AS "signal_created_at", ` +
  `"signal"."updated_at" AS "signal_updated_at", "signal"."name" AS "signal_name", "signal"."description" AS "signal_description", ` +
  `"signal"."signal_type" AS "signal_signal_type", "signal"."status" AS "signal_status", ` +
  `"signal"."model_instance_id" AS "signal_model_instance_id", "signal"."audience_id" AS "signal_audience_id", ` +
  `"signal"."connection_id" AS "signal_connection_id", "signal"."config" AS "signal_config"`;

export const SIGNAL_BY_ID = `SELECT ${SIGNAL_COLUMNS} FROM "signals" "signal" WHERE "signal"."customer_id" = $1 AND "signal"."id" = $2`;

/** One signal row (its columns named `${prefix}<column>`) as the API's JSON. */
export function signalDto(row: Record<string, unknown>, prefix: string) {
  const field = (name: string) => row[`${prefix}${name}`];
  return {
    id: field('id'),
    customer: field('customer_id'),
    name: field('name'),
    description: field('description'),
    signal_type: field('signal_type'),
    status: field('status'),
    model_instance: field('model_instance_id'),
    audience: field('audience_id'),
    connection: field('connection_id'),
    config: field('config'),
    created_at: (field('created_at') as Date).toISOString(),
    updated_at: (field('updated_at') as Date).toISOString(),
  };
}
