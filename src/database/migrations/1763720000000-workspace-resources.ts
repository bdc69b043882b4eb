import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Connections, AI model instances, audiences (with their destination links) and signals.
 * Every table leads its primary key with customer_id; every reference between them is a composite
 * (customer_id, x_id) foreign key, so the database cannot hold a cross-workspace reference
 * (SPEC section 1). Indexes lead with customer_id and end with id to serve filters with the
 * default ordering.
 */
export class WorkspaceResources1763720000000 implements MigrationInterface {
  name = 'WorkspaceResources1763720000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const statements = [
      `CREATE TABLE "connections" (
        "customer_id" integer NOT NULL,
        "id" SERIAL NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "platform" character varying(16) NOT NULL,
        "external_account_id" character varying(64) NOT NULL,
        "account_name" character varying(255) NOT NULL,
        "status" character varying(16) NOT NULL DEFAULT 'active',
        "scopes" text array NOT NULL DEFAULT '{}'::text[],
        "connected_by" integer,
        "access_token_encrypted" bytea,
        "refresh_token_encrypted" bytea,
        "token_expires_at" TIMESTAMP WITH TIME ZONE,
        "last_refreshed_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "connections_status_check" CHECK ("status" IN ('active', 'expired', 'revoked', 'error')),
        CONSTRAINT "connections_platform_check" CHECK ("platform" IN ('google_ads', 'meta_ads')),
        CONSTRAINT "connections_pkey" PRIMARY KEY ("customer_id", "id"),
        CONSTRAINT "connections_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE,
        CONSTRAINT "connections_connected_by_fkey" FOREIGN KEY ("connected_by") REFERENCES "users"("id") ON DELETE SET NULL
      )`,
      `CREATE UNIQUE INDEX "connections_customer_account_key" ON "connections" ("customer_id", "platform", "external_account_id")`,
      `CREATE INDEX "connections_customer_status_idx" ON "connections" ("customer_id", "status", "id")`,
      `CREATE INDEX "connections_customer_name_idx" ON "connections" ("customer_id", "account_name")`,
      `CREATE INDEX "connections_customer_created_at_idx" ON "connections" ("customer_id", "created_at")`,
      `CREATE INDEX "connections_customer_updated_at_idx" ON "connections" ("customer_id", "updated_at")`,

      `CREATE TABLE "ai_model_instances" (
        "customer_id" integer NOT NULL,
        "id" SERIAL NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "name" character varying(255) NOT NULL,
        "model_type" character varying(32) NOT NULL,
        "base_model" character varying(100) NOT NULL,
        "parameters" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "status" character varying(16) NOT NULL DEFAULT 'pending',
        "metrics" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "version" integer NOT NULL DEFAULT '0',
        CONSTRAINT "ai_model_instances_status_check" CHECK ("status" IN ('pending', 'training', 'ready', 'failed', 'archived')),
        CONSTRAINT "ai_model_instances_model_type_check" CHECK ("model_type" IN ('propensity', 'lifetime_value', 'churn', 'lookalike')),
        CONSTRAINT "ai_model_instances_pkey" PRIMARY KEY ("customer_id", "id"),
        CONSTRAINT "ai_model_instances_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE
      )`,
      `CREATE INDEX "ai_model_instances_customer_status_idx" ON "ai_model_instances" ("customer_id", "status", "id")`,
      `CREATE INDEX "ai_model_instances_customer_model_type_idx" ON "ai_model_instances" ("customer_id", "model_type", "id")`,
      `CREATE INDEX "ai_model_instances_customer_name_idx" ON "ai_model_instances" ("customer_id", "name")`,
      `CREATE INDEX "ai_model_instances_customer_created_at_idx" ON "ai_model_instances" ("customer_id", "created_at")`,
      `CREATE INDEX "ai_model_instances_customer_updated_at_idx" ON "ai_model_instances" ("customer_id", "updated_at")`,

      `CREATE TABLE "audiences" (
        "customer_id" integer NOT NULL,
        "id" SERIAL NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "name" character varying(255) NOT NULL,
        "description" character varying(2000) NOT NULL DEFAULT '',
        "source_type" character varying(16) NOT NULL,
        "rules" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "model_instance_id" integer,
        "min_score" double precision,
        "status" character varying(16) NOT NULL DEFAULT 'draft',
        "size" integer,
        CONSTRAINT "audiences_min_score_check" CHECK ("min_score" IS NULL OR ("min_score" >= 0 AND "min_score" <= 1)),
        CONSTRAINT "audiences_status_check" CHECK ("status" IN ('draft', 'active', 'archived')),
        CONSTRAINT "audiences_source_type_check" CHECK ("source_type" IN ('rules', 'model', 'upload')),
        CONSTRAINT "audiences_pkey" PRIMARY KEY ("customer_id", "id"),
        CONSTRAINT "audiences_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE,
        CONSTRAINT "audiences_model_instance_fkey" FOREIGN KEY ("customer_id", "model_instance_id") REFERENCES "ai_model_instances"("customer_id", "id")
      )`,
      `CREATE UNIQUE INDEX "audiences_customer_name_lower_key" ON "audiences" ("customer_id", lower("name"))`,
      `CREATE INDEX "audiences_customer_status_idx" ON "audiences" ("customer_id", "status", "id")`,
      `CREATE INDEX "audiences_customer_source_type_idx" ON "audiences" ("customer_id", "source_type", "id")`,
      `CREATE INDEX "audiences_customer_model_instance_idx" ON "audiences" ("customer_id", "model_instance_id")`,
      `CREATE INDEX "audiences_customer_name_idx" ON "audiences" ("customer_id", "name")`,
      `CREATE INDEX "audiences_customer_created_at_idx" ON "audiences" ("customer_id", "created_at")`,
      `CREATE INDEX "audiences_customer_updated_at_idx" ON "audiences" ("customer_id", "updated_at")`,

      `CREATE TABLE "audience_connections" (
        "customer_id" integer NOT NULL,
        "audience_id" integer NOT NULL,
        "connection_id" integer NOT NULL,
        CONSTRAINT "audience_connections_pkey" PRIMARY KEY ("customer_id", "audience_id", "connection_id"),
        CONSTRAINT "audience_connections_audience_fkey" FOREIGN KEY ("customer_id", "audience_id") REFERENCES "audiences"("customer_id", "id") ON DELETE CASCADE,
        CONSTRAINT "audience_connections_connection_fkey" FOREIGN KEY ("customer_id", "connection_id") REFERENCES "connections"("customer_id", "id") ON DELETE CASCADE
      )`,
      `CREATE INDEX "audience_connections_customer_connection_idx" ON "audience_connections" ("customer_id", "connection_id")`,

      `CREATE TABLE "signals" (
        "customer_id" integer NOT NULL,
        "id" SERIAL NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "name" character varying(255) NOT NULL,
        "description" character varying(2000) NOT NULL DEFAULT '',
        "signal_type" character varying(16) NOT NULL,
        "status" smallint NOT NULL DEFAULT '0',
        "model_instance_id" integer,
        "audience_id" integer,
        "connection_id" integer,
        "config" jsonb NOT NULL DEFAULT '{}'::jsonb,
        CONSTRAINT "signals_status_check" CHECK ("status" BETWEEN 0 AND 4),
        CONSTRAINT "signals_signal_type_check" CHECK ("signal_type" IN ('conversion', 'value', 'score')),
        CONSTRAINT "signals_pkey" PRIMARY KEY ("customer_id", "id"),
        CONSTRAINT "signals_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE,
        CONSTRAINT "signals_model_instance_fkey" FOREIGN KEY ("customer_id", "model_instance_id") REFERENCES "ai_model_instances"("customer_id", "id"),
        CONSTRAINT "signals_audience_fkey" FOREIGN KEY ("customer_id", "audience_id") REFERENCES "audiences"("customer_id", "id"),
        CONSTRAINT "signals_connection_fkey" FOREIGN KEY ("customer_id", "connection_id") REFERENCES "connections"("customer_id", "id")
      )`,
      `CREATE INDEX "signals_customer_status_idx" ON "signals" ("customer_id", "status", "id")`,
      `CREATE INDEX "signals_customer_signal_type_idx" ON "signals" ("customer_id", "signal_type", "id")`,
      `CREATE INDEX "signals_customer_model_instance_idx" ON "signals" ("customer_id", "model_instance_id")`,
      `CREATE INDEX "signals_customer_audience_idx" ON "signals" ("customer_id", "audience_id")`,
      `CREATE INDEX "signals_customer_connection_idx" ON "signals" ("customer_id", "connection_id")`,
      `CREATE INDEX "signals_customer_name_idx" ON "signals" ("customer_id", "name")`,
      `CREATE INDEX "signals_customer_created_at_idx" ON "signals" ("customer_id", "created_at")`,
      `CREATE INDEX "signals_customer_updated_at_idx" ON "signals" ("customer_id", "updated_at")`,
    ];
    for (const statement of statements) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['signals', 'audience_connections', 'audiences', 'ai_model_instances', 'connections']) {
      await queryRunner.query(`DROP TABLE "${table}"`);
    }
  }
}
