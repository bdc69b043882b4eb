import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Signal events and their delivery (SPEC 10.4).
 * - `signals.status_reason`: why the delivery pipeline turned a signal `failed`.
 * - `signal_events`: one row per accepted event. `(customer_id, signal_id, event_id)` is unique,
 *   so a repeated event is refused by the index inside the INSERT itself (ON CONFLICT DO NOTHING),
 *   whatever else is inserting at the same moment; rows older than 30 days are deleted, which is
 *   the dedup window. Identifiers are only ever stored hashed, per platform, as 33-byte entries
 *   (a tag byte and the 32 bytes of one SHA-256) packed into one bytea per platform; country and
 *   postal code stay in clear as for people (SPEC 10, "Privacy by construction").
 * - `signal_deliveries`: per signal the counts of its events by delivery state, kept by statement
 *   triggers from the transition tables of each INSERT, UPDATE and DELETE on `signal_events` (one
 *   grouped upsert per statement, never a row at a time), and the last delivery and error. Reading
 *   a signal's counts is then one row by primary key, however many events it has.
 */
export class SignalEvents1764310000000 implements MigrationInterface {
  name = 'SignalEvents1764310000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "signals" ADD "status_reason" character varying(500)`);
    await queryRunner.query(`
      CREATE TABLE "signal_events" (
        "customer_id" bigint NOT NULL,
        "id" BIGSERIAL NOT NULL,
        "signal_id" bigint NOT NULL,
        "event_id" character varying(255) NOT NULL,
        "event_time" TIMESTAMP WITH TIME ZONE NOT NULL,
        "value" double precision,
        "currency" character varying(3),
        "external_id" character varying(255),
        "google_user_data" bytea,
        "meta_user_data" bytea,
        "country_code" character varying(2),
        "postal_code" character varying(16),
        "mobile_ad_id" uuid,
        "gclid" character varying(255),
        "fbc" character varying(255),
        "fbp" character varying(255),
        "client_ip_address" character varying(45),
        "client_user_agent" character varying(1000),
        "event_source_url" character varying(2048),
        "status" character varying(16) NOT NULL DEFAULT 'pending',
        "attempts" integer NOT NULL DEFAULT 0,
        "error" character varying(300),
        "received_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "delivered_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "signal_events_pkey" PRIMARY KEY ("customer_id", "id"),
        CONSTRAINT "signal_events_customer_signal_event_key" UNIQUE ("customer_id", "signal_id", "event_id"),
        CONSTRAINT "signal_events_status_check" CHECK ("status" IN ('pending', 'delivered', 'failed', 'held', 'expired')),
        CONSTRAINT "signal_events_signal_fkey" FOREIGN KEY ("customer_id", "signal_id")
          REFERENCES "signals"("customer_id", "id") ON DELETE CASCADE
      )`);
    await queryRunner.query(
      `CREATE INDEX "signal_events_customer_signal_status_idx" ON "signal_events" ("customer_id", "signal_id", "status", "id")`,
    );
    await queryRunner.query(`CREATE INDEX "signal_events_received_at_idx" ON "signal_events" ("received_at")`);
    await queryRunner.query(`
      CREATE TABLE "signal_deliveries" (
        "customer_id" bigint NOT NULL,
        "signal_id" bigint NOT NULL,
        "received" bigint NOT NULL DEFAULT 0,
        "pending" bigint NOT NULL DEFAULT 0,
        "delivered" bigint NOT NULL DEFAULT 0,
        "failed" bigint NOT NULL DEFAULT 0,
        "last_delivered_at" TIMESTAMP WITH TIME ZONE,
        "last_error" character varying(300),
        "last_error_at" TIMESTAMP WITH TIME ZONE,
        "retry_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "signal_deliveries_pkey" PRIMARY KEY ("customer_id", "signal_id"),
        CONSTRAINT "signal_deliveries_signal_fkey" FOREIGN KEY ("customer_id", "signal_id")
          REFERENCES "signals"("customer_id", "id") ON DELETE CASCADE
      )`);
    // Counts by state: held events are still to be delivered (pending), expired ones will never be (failed).
    await queryRunner.query(`
      CREATE FUNCTION signal_deliveries_count() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO signal_deliveries AS d (customer_id, signal_id, received, pending, delivered, failed)
          SELECT customer_id, signal_id, count(*),
                 count(*) FILTER (WHERE status IN ('pending', 'held')),
                 count(*) FILTER (WHERE status = 'delivered'),
                 count(*) FILTER (WHERE status IN ('failed', 'expired'))
            FROM new_rows GROUP BY customer_id, signal_id
          ON CONFLICT (customer_id, signal_id) DO UPDATE
            SET received = d.received + EXCLUDED.received, pending = d.pending + EXCLUDED.pending,
                delivered = d.delivered + EXCLUDED.delivered, failed = d.failed + EXCLUDED.failed;
        ELSIF TG_OP = 'UPDATE' THEN
          UPDATE signal_deliveries d
             SET pending = d.pending + delta.pending, delivered = d.delivered + delta.delivered, failed = d.failed + delta.failed
            FROM (
              SELECT customer_id, signal_id,
                     coalesce(sum(sign) FILTER (WHERE status IN ('pending', 'held')), 0) AS pending,
                     coalesce(sum(sign) FILTER (WHERE status = 'delivered'), 0) AS delivered,
                     coalesce(sum(sign) FILTER (WHERE status IN ('failed', 'expired')), 0) AS failed
                FROM (SELECT customer_id, signal_id, status, 1 AS sign FROM new_rows
                      UNION ALL SELECT customer_id, signal_id, status, -1 FROM old_rows) changes
               GROUP BY customer_id, signal_id
            ) delta
           WHERE d.customer_id = delta.customer_id AND d.signal_id = delta.signal_id
             AND (delta.pending <> 0 OR delta.delivered <> 0 OR delta.failed <> 0);
        ELSE
          UPDATE signal_deliveries d
             SET received = d.received - gone.received, pending = d.pending - gone.pending,
                 delivered = d.delivered - gone.delivered, failed = d.failed - gone.failed
            FROM (
              SELECT customer_id, signal_id, count(*) AS received,
                     count(*) FILTER (WHERE status IN ('pending', 'held')) AS pending,
                     count(*) FILTER (WHERE status = 'delivered') AS delivered,
                     count(*) FILTER (WHERE status IN ('failed', 'expired')) AS failed
                FROM old_rows GROUP BY customer_id, signal_id
            ) gone
           WHERE d.customer_id = gone.customer_id AND d.signal_id = gone.signal_id;
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(
      `CREATE TRIGGER signal_deliveries_on_insert AFTER INSERT ON signal_events REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION signal_deliveries_count()`,
    );
    await queryRunner.query(
      `CREATE TRIGGER signal_deliveries_on_update AFTER UPDATE ON signal_events REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION signal_deliveries_count()`,
    );
    await queryRunner.query(
      `CREATE TRIGGER signal_deliveries_on_delete AFTER DELETE ON signal_events REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION signal_deliveries_count()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "signal_deliveries"`);
    await queryRunner.query(`DROP TABLE "signal_events"`);
    await queryRunner.query(`DROP FUNCTION signal_deliveries_count()`);
    await queryRunner.query(`ALTER TABLE "signals" DROP COLUMN "status_reason"`);
  }
}
