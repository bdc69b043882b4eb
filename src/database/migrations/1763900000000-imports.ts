import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Imports and their staged rows (SPEC 10.1, Imports). Generated from the entities, then reviewed:
 * constraint names follow the house's `<table>_pkey` / `<table>_<what>_fkey`, and each foreign
 * key is declared with its table. `import_rows` holds no raw identifier, only hashes and the
 * columns the SPEC keeps in clear; its key leads with the workspace and the import.
 */
export class Imports1763900000000 implements MigrationInterface {
  name = 'Imports1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "imports" (
        "customer_id" bigint NOT NULL,
        "id" BIGSERIAL NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "target" character varying(16) NOT NULL,
        "audience_id" bigint,
        "mode" character varying(8),
        "status" character varying(16) NOT NULL,
        "rows_total" bigint NOT NULL DEFAULT '0',
        "rows_accepted" bigint NOT NULL DEFAULT '0',
        "rows_rejected" bigint NOT NULL DEFAULT '0',
        "rejected_by_reason" jsonb NOT NULL DEFAULT '{}',
        "errors_sample" jsonb NOT NULL DEFAULT '[]',
        "started_at" TIMESTAMP WITH TIME ZONE,
        "finished_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "imports_pkey" PRIMARY KEY ("customer_id", "id"),
        CONSTRAINT "imports_target_check" CHECK ("target" IN ('people', 'audience')),
        CONSTRAINT "imports_status_check" CHECK ("status" IN ('receiving', 'queued', 'processing', 'succeeded', 'failed')),
        CONSTRAINT "imports_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(`CREATE INDEX "imports_customer_created_at_idx" ON "imports" ("customer_id", "created_at")`);
    await queryRunner.query(`
      CREATE TABLE "import_rows" (
        "customer_id" bigint NOT NULL,
        "import_id" bigint NOT NULL,
        "line" bigint NOT NULL,
        "external_id" character varying(255) NOT NULL,
        "traits" jsonb NOT NULL,
        "removed_traits" text array NOT NULL,
        "consent_ad_user_data" character varying(16),
        "consent_ad_personalization" character varying(16),
        "country_code" character varying(2),
        "postal_code" character varying(16),
        "mobile_ad_id" uuid,
        "named_kinds" text array NOT NULL,
        "hash_tags" text array NOT NULL,
        "hashes" bytea NOT NULL,
        CONSTRAINT "import_rows_pkey" PRIMARY KEY ("customer_id", "import_id", "line"),
        CONSTRAINT "import_rows_import_fkey" FOREIGN KEY ("customer_id", "import_id") REFERENCES "imports"("customer_id", "id") ON DELETE CASCADE
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "import_rows"`);
    await queryRunner.query(`DROP TABLE "imports"`);
  }
}
