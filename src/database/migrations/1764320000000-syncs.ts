import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Audience syncs (SPEC 10.3):
 * - `sync_runs`: one row per run. A partial unique index allows one queued or running real run
 *   per (audience, connection), so concurrent POSTs and triggers coalesce on it (a dry run is
 *   never coalesced).
 * - `audience_destinations`: what a destination holds, per (audience, connection): the platform
 *   list's id, the last run, members sent, match rate. It outlives the audience's link to the
 *   connection (removing a destination leaves the platform list where it is, and adding it back
 *   finds the same list); it goes with the audience or the connection.
 * - `sync_sent_members`: what each destination last accepted, per person: the identifiers sent
 *   (one byte of kind and 32 of hash each, sorted), the clear fields and consent sent, and the
 *   person's `updated_at` then, so a sync recomputes identifiers only for people written since.
 *   No foreign keys (PostgreSQL checks them per inserted row, a million at a first sync): an
 *   erased person's row must stay, since it is what the removal sends; the rows of a deleted
 *   audience or connection go by statement triggers.
 * - `sync_rate_budgets`: one token bucket per ad account or Google project, shared by every
 *   worker process (a row, not memory). Not workspace data: two workspaces may share an account.
 * - `person_erasures` and `person_erasure_identifiers` go: an erased person's hashes were copied
 *   there for a sync to consume, but what each destination was sent is now in
 *   `sync_sent_members`, which the removal consumes; a person sent nowhere leaves no hash at once.
 */
export class Syncs1764320000000 implements MigrationInterface {
  name = 'Syncs1764320000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "sync_runs" (
        "customer_id" bigint NOT NULL,
        "id" BIGSERIAL NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "audience_id" bigint NOT NULL,
        "connection_id" bigint NOT NULL,
        "platform" character varying(16) NOT NULL,
        "platform_audience_id" character varying(64),
        "trigger" character varying(24) NOT NULL,
        "dry_run" boolean NOT NULL DEFAULT false,
        "status" character varying(24) NOT NULL DEFAULT 'queued',
        "planned_add" integer,
        "planned_remove" integer,
        "added" integer NOT NULL DEFAULT 0,
        "removed" integer NOT NULL DEFAULT 0,
        "failed" integer NOT NULL DEFAULT 0,
        "skipped_consent" integer NOT NULL DEFAULT 0,
        "skipped_unmatchable" integer NOT NULL DEFAULT 0,
        "failed_by_reason" jsonb NOT NULL DEFAULT '{}',
        "match_rate" double precision,
        "error_code" character varying(64),
        "error_detail" character varying(1000),
        "attempts" integer NOT NULL DEFAULT 0,
        "request_attempt" integer NOT NULL DEFAULT 0,
        "pending_requests" jsonb NOT NULL DEFAULT '[]',
        "poll_attempts" integer NOT NULL DEFAULT 0,
        "queued_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "started_at" TIMESTAMP WITH TIME ZONE,
        "finished_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "sync_runs_pkey" PRIMARY KEY ("customer_id", "id"),
        CONSTRAINT "sync_runs_trigger_check" CHECK ("trigger" IN ('manual', 'membership_change', 'schedule')),
        CONSTRAINT "sync_runs_status_check" CHECK ("status" IN ('queued', 'running', 'awaiting_platform', 'succeeded', 'partially_failed', 'failed', 'cancelled')),
        CONSTRAINT "sync_runs_match_rate_check" CHECK ("match_rate" BETWEEN 0 AND 1),
        CONSTRAINT "sync_runs_audience_fkey" FOREIGN KEY ("customer_id", "audience_id") REFERENCES "audiences"("customer_id", "id") ON DELETE CASCADE,
        CONSTRAINT "sync_runs_connection_fkey" FOREIGN KEY ("customer_id", "connection_id") REFERENCES "connections"("customer_id", "id") ON DELETE CASCADE
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "sync_runs_one_open_idx" ON "sync_runs" ("customer_id", "audience_id", "connection_id") WHERE "status" IN ('queued', 'running') AND NOT "dry_run"`,
    );
    await queryRunner.query(`CREATE INDEX "sync_runs_customer_audience_idx" ON "sync_runs" ("customer_id", "audience_id", "id")`);
    await queryRunner.query(`CREATE INDEX "sync_runs_customer_connection_idx" ON "sync_runs" ("customer_id", "connection_id", "id")`);
    await queryRunner.query(`CREATE INDEX "sync_runs_customer_status_idx" ON "sync_runs" ("customer_id", "status", "id")`);
    await queryRunner.query(`CREATE INDEX "sync_runs_customer_created_at_idx" ON "sync_runs" ("customer_id", "created_at")`);

    await queryRunner.query(`
      CREATE TABLE "audience_destinations" (
        "customer_id" bigint NOT NULL,
        "audience_id" bigint NOT NULL,
        "connection_id" bigint NOT NULL,
        "platform_audience_id" character varying(64),
        "status_reason" character varying(64),
        "last_run_id" bigint,
        "last_run_status" character varying(24),
        "last_synced_at" TIMESTAMP WITH TIME ZONE,
        "members_sent" integer NOT NULL DEFAULT 0,
        "match_rate" double precision,
        CONSTRAINT "audience_destinations_pkey" PRIMARY KEY ("customer_id", "audience_id", "connection_id"),
        CONSTRAINT "audience_destinations_audience_fkey" FOREIGN KEY ("customer_id", "audience_id") REFERENCES "audiences"("customer_id", "id") ON DELETE CASCADE,
        CONSTRAINT "audience_destinations_connection_fkey" FOREIGN KEY ("customer_id", "connection_id") REFERENCES "connections"("customer_id", "id") ON DELETE CASCADE
      )`);

    await queryRunner.query(`
      CREATE TABLE "sync_sent_members" (
        "customer_id" bigint NOT NULL,
        "audience_id" bigint NOT NULL,
        "connection_id" bigint NOT NULL,
        "person_id" bigint NOT NULL,
        "identifiers" bytea NOT NULL,
        "region_code" character varying(2),
        "postal_code" character varying(16),
        "mobile_ad_id" uuid,
        "consent" character varying(2) NOT NULL,
        "person_updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "request_id" character varying(128),
        CONSTRAINT "sync_sent_members_pkey" PRIMARY KEY ("customer_id", "audience_id", "connection_id", "person_id")
      )`);
    for (const [table, column] of [
      ['audiences', 'audience_id'],
      ['connections', 'connection_id'],
    ] as const) {
      await queryRunner.query(`
        CREATE FUNCTION "${table}_delete_sent_members"() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          DELETE FROM sync_sent_members s USING gone g WHERE s.customer_id = g.customer_id AND s.${column} = g.id;
          RETURN NULL;
        END $$`);
      await queryRunner.query(
        `CREATE TRIGGER "${table}_delete_sent_members" AFTER DELETE ON "${table}" REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION ${table}_delete_sent_members()`,
      );
    }

    await queryRunner.query(`DROP TABLE "person_erasure_identifiers"`);
    await queryRunner.query(`DROP TABLE "person_erasures"`);

    await queryRunner.query(`
      CREATE TABLE "sync_rate_budgets" (
        "scope" character varying(96) NOT NULL,
        "tokens" double precision NOT NULL,
        "refilled_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT clock_timestamp(),
        CONSTRAINT "sync_rate_budgets_pkey" PRIMARY KEY ("scope")
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "sync_rate_budgets"`);
    await queryRunner.query(`
      CREATE TABLE "person_erasures" (
        "customer_id" bigint NOT NULL,
        "person_id" bigint NOT NULL,
        "mobile_ad_id" uuid,
        "erased_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "person_erasures_pkey" PRIMARY KEY ("customer_id", "person_id"),
        CONSTRAINT "person_erasures_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(`
      CREATE TABLE "person_erasure_identifiers" (
        "customer_id" bigint NOT NULL,
        "person_id" bigint NOT NULL,
        "platform" character varying(8) NOT NULL,
        "kind" character varying(16) NOT NULL,
        "hash" bytea NOT NULL,
        CONSTRAINT "person_erasure_identifiers_pkey" PRIMARY KEY ("customer_id", "person_id", "platform", "kind", "hash"),
        CONSTRAINT "person_erasure_identifiers_hash_length_check" CHECK (octet_length("hash") = 32),
        CONSTRAINT "person_erasure_identifiers_erasure_fkey" FOREIGN KEY ("customer_id", "person_id")
          REFERENCES "person_erasures"("customer_id", "person_id") ON DELETE CASCADE
      )`);
    for (const table of ['audiences', 'connections']) {
      await queryRunner.query(`DROP TRIGGER "${table}_delete_sent_members" ON "${table}"`);
      await queryRunner.query(`DROP FUNCTION "${table}_delete_sent_members"()`);
    }
    await queryRunner.query(`DROP TABLE "sync_sent_members"`);
    await queryRunner.query(`DROP TABLE "audience_destinations"`);
    await queryRunner.query(`DROP TABLE "sync_runs"`);
  }
}
