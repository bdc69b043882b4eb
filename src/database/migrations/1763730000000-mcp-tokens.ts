import type { MigrationInterface, QueryRunner } from 'typeorm';

export class McpTokens1763730000000 implements MigrationInterface {
  name = 'McpTokens1763730000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "mcp_tokens" (
        "customer_id" integer NOT NULL,
        "id" SERIAL NOT NULL,
        "user_id" integer NOT NULL,
        "name" character varying(255) NOT NULL,
        "prefix" character varying(16) NOT NULL,
        "token_hash" bytea NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "revoked_at" TIMESTAMP WITH TIME ZONE,
        "last_used_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "mcp_tokens_pkey" PRIMARY KEY ("customer_id", "id"),
        CONSTRAINT "mcp_tokens_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE,
        CONSTRAINT "mcp_tokens_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX "mcp_tokens_prefix_key" ON "mcp_tokens" ("prefix")`);
    await queryRunner.query(`CREATE INDEX "mcp_tokens_customer_user_idx" ON "mcp_tokens" ("customer_id", "user_id", "id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "mcp_tokens"`);
  }
}
