import type { MigrationInterface, QueryRunner } from 'typeorm';

export class IdempotencyKeys1763740000000 implements MigrationInterface {
  name = 'IdempotencyKeys1763740000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "idempotency_keys" (
        "customer_id" integer NOT NULL,
        "identity" character varying(64) NOT NULL,
        "key" character varying(255) NOT NULL,
        "request_hash" bytea NOT NULL,
        "status_code" integer,
        "response_body" jsonb,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("customer_id", "identity", "key"),
        CONSTRAINT "idempotency_keys_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "idempotency_keys"`);
  }
}
