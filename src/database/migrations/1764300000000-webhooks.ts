import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook endpoints and their deliveries (SPEC 10.5). Generated from the entities, then reviewed:
 * names follow the house's `<table>_pkey` / `<table>_<what>_fkey`. The signing secrets are bytea
 * ciphertexts (TokenCipher); a delivery keeps its body as sent and points at its endpoint with a
 * key that leads with the workspace, so deleting an endpoint deletes its deliveries.
 */
export class Webhooks1764300000000 implements MigrationInterface {
  name = 'Webhooks1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "webhooks" (
        "customer_id" bigint NOT NULL,
        "id" BIGSERIAL NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "url" character varying(2048) NOT NULL,
        "description" character varying(2000) NOT NULL DEFAULT '',
        "events" text array NOT NULL,
        "enabled" boolean NOT NULL DEFAULT true,
        "disabled_reason" character varying(32),
        "disabled_at" TIMESTAMP WITH TIME ZONE,
        "failing_since" TIMESTAMP WITH TIME ZONE,
        "secret" bytea NOT NULL,
        "previous_secret" bytea,
        "previous_secret_expires_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "webhooks_pkey" PRIMARY KEY ("customer_id", "id"),
        CONSTRAINT "webhooks_disabled_reason_check" CHECK ("disabled_reason" IS NULL OR "disabled_reason" IN ('disabled_by_user', 'failing_for_24_hours')),
        CONSTRAINT "webhooks_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(`CREATE INDEX "webhooks_customer_created_at_idx" ON "webhooks" ("customer_id", "created_at")`);
    await queryRunner.query(`
      CREATE TABLE "webhook_deliveries" (
        "customer_id" bigint NOT NULL,
        "id" BIGSERIAL NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "webhook_id" bigint NOT NULL,
        "event_id" character varying(64) NOT NULL,
        "event_type" character varying(64) NOT NULL,
        "body" text NOT NULL,
        "status" character varying(16) NOT NULL DEFAULT 'pending',
        "attempt" integer NOT NULL DEFAULT '0',
        "response_status" integer,
        "duration_ms" integer,
        "error" character varying(500),
        "next_attempt_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("customer_id", "id"),
        CONSTRAINT "webhook_deliveries_status_check" CHECK ("status" IN ('pending', 'succeeded', 'failed')),
        CONSTRAINT "webhook_deliveries_webhook_fkey" FOREIGN KEY ("customer_id", "webhook_id") REFERENCES "webhooks"("customer_id", "id") ON DELETE CASCADE
      )`);
    await queryRunner.query(
      `CREATE INDEX "webhook_deliveries_customer_webhook_idx" ON "webhook_deliveries" ("customer_id", "webhook_id", "id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "webhook_deliveries"`);
    await queryRunner.query(`DROP TABLE "webhooks"`);
  }
}
