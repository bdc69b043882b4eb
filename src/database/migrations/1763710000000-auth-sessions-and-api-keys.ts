import type { MigrationInterface, QueryRunner } from 'typeorm';

export class AuthSessionsAndApiKeys1763710000000 implements MigrationInterface {
  name = 'AuthSessionsAndApiKeys1763710000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "auth_sessions" (
        "id" uuid NOT NULL,
        "user_id" integer NOT NULL,
        "customer_id" integer NOT NULL,
        "refresh_jti" uuid NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "revoked_at" TIMESTAMP WITH TIME ZONE,
        "revoked_reason" character varying(32),
        CONSTRAINT "auth_sessions_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "auth_sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(`CREATE INDEX "auth_sessions_user_id_idx" ON "auth_sessions" ("user_id")`);

    await queryRunner.query(`
      CREATE TABLE "api_keys" (
        "customer_id" integer NOT NULL,
        "id" SERIAL NOT NULL,
        "name" character varying(255) NOT NULL,
        "prefix" character varying(16) NOT NULL,
        "key_hash" bytea NOT NULL,
        "scope" character varying(8) NOT NULL DEFAULT 'write',
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "expires_at" TIMESTAMP WITH TIME ZONE,
        "revoked_at" TIMESTAMP WITH TIME ZONE,
        "last_used_at" TIMESTAMP WITH TIME ZONE,
        "replaced_by_id" integer,
        CONSTRAINT "api_keys_scope_check" CHECK ("scope" IN ('read', 'write')),
        CONSTRAINT "api_keys_pkey" PRIMARY KEY ("customer_id", "id"),
        CONSTRAINT "api_keys_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE,
        CONSTRAINT "api_keys_replaced_by_fkey" FOREIGN KEY ("customer_id", "replaced_by_id") REFERENCES "api_keys"("customer_id", "id")
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX "api_keys_prefix_key" ON "api_keys" ("prefix")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "api_keys"`);
    await queryRunner.query(`DROP TABLE "auth_sessions"`);
  }
}
