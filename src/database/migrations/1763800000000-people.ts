import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * People and their identifier hashes (SPEC 10.1). Generated from the entities, then reviewed:
 * constraint names follow the house's `<table>_pkey` / `<table>_<what>_fkey`, and the tables are
 * created in dependency order so that each foreign key is declared with its table.
 */
export class People1763800000000 implements MigrationInterface {
  name = 'People1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "people" (
        "customer_id" bigint NOT NULL,
        "id" BIGSERIAL NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "external_id" character varying(255) NOT NULL,
        "traits" jsonb NOT NULL DEFAULT '{}',
        "consent_ad_user_data" character varying(16) NOT NULL DEFAULT 'unspecified',
        "consent_ad_personalization" character varying(16) NOT NULL DEFAULT 'unspecified',
        "country_code" character varying(2),
        "postal_code" character varying(16),
        "mobile_ad_id" uuid,
        "matched_keys" text array NOT NULL DEFAULT '{}',
        CONSTRAINT "people_pkey" PRIMARY KEY ("customer_id", "id"),
        CONSTRAINT "people_customer_external_id_key" UNIQUE ("customer_id", "external_id"),
        CONSTRAINT "people_consent_ad_user_data_check" CHECK ("consent_ad_user_data" IN ('granted', 'denied', 'unspecified')),
        CONSTRAINT "people_consent_ad_personalization_check" CHECK ("consent_ad_personalization" IN ('granted', 'denied', 'unspecified')),
        CONSTRAINT "people_country_code_check" CHECK ("country_code" IS NULL OR "country_code" ~ '^[A-Z]{2}$'),
        CONSTRAINT "people_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(`CREATE INDEX "people_customer_created_at_idx" ON "people" ("customer_id", "created_at")`);
    await queryRunner.query(`CREATE INDEX "people_customer_updated_at_idx" ON "people" ("customer_id", "updated_at")`);
    await queryRunner.query(`
      CREATE TABLE "person_identifiers" (
        "customer_id" bigint NOT NULL,
        "person_id" bigint NOT NULL,
        "platform" character varying(8) NOT NULL,
        "kind" character varying(16) NOT NULL,
        "hash" bytea NOT NULL,
        CONSTRAINT "person_identifiers_pkey" PRIMARY KEY ("customer_id", "person_id", "platform", "kind", "hash"),
        CONSTRAINT "person_identifiers_hash_length_check" CHECK (octet_length("hash") = 32),
        CONSTRAINT "person_identifiers_platform_check" CHECK ("platform" IN ('google', 'meta')),
        CONSTRAINT "person_identifiers_kind_check" CHECK ("kind" IN ('email', 'phone', 'first_name', 'last_name', 'country', 'zip')),
        CONSTRAINT "person_identifiers_person_fkey" FOREIGN KEY ("customer_id", "person_id") REFERENCES "people"("customer_id", "id") ON DELETE CASCADE
      )`);
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
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "person_erasure_identifiers"`);
    await queryRunner.query(`DROP TABLE "person_erasures"`);
    await queryRunner.query(`DROP TABLE "person_identifiers"`);
    await queryRunner.query(`DROP TABLE "people"`);
  }
}
