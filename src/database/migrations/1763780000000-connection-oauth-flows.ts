import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ConnectionOauthFlows1763780000000 implements MigrationInterface {
  name = 'ConnectionOauthFlows1763780000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "connection_flow_states" (
        "state_hash" bytea NOT NULL,
        "platform" character varying(16) NOT NULL,
        "customer_id" integer NOT NULL,
        "user_id" integer NOT NULL,
        "code_verifier" character varying(128) NOT NULL,
        "redirect_uri" character varying(2048) NOT NULL,
        "return_url" character varying(2048) NOT NULL,
        "browser_hash" bytea NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "connection_flow_states_pkey" PRIMARY KEY ("state_hash"),
        CONSTRAINT "connection_flow_states_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE,
        CONSTRAINT "connection_flow_states_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(`CREATE INDEX "connection_flow_states_expires_at_idx" ON "connection_flow_states" ("expires_at")`);
    await queryRunner.query(`CREATE INDEX "connection_flow_states_customer_id_idx" ON "connection_flow_states" ("customer_id")`);
    await queryRunner.query(`CREATE INDEX "connection_flow_states_user_id_idx" ON "connection_flow_states" ("user_id")`);
    await queryRunner.query(`ALTER TABLE "connections" ADD "status_reason" character varying(64)`);
    // The token sweep looks across workspaces for active connections whose token runs out soon.
    await queryRunner.query(`CREATE INDEX "connections_status_token_expires_at_idx" ON "connections" ("status", "token_expires_at")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "connections_status_token_expires_at_idx"`);
    await queryRunner.query(`ALTER TABLE "connections" DROP COLUMN "status_reason"`);
    await queryRunner.query(`DROP TABLE "connection_flow_states"`);
  }
}
