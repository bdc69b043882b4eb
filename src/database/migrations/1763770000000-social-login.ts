import type { MigrationInterface, QueryRunner } from 'typeorm';

export class SocialLogin1763770000000 implements MigrationInterface {
  name = 'SocialLogin1763770000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "social_login_states" (
        "state_hash" bytea NOT NULL,
        "provider" character varying(32) NOT NULL,
        "redirect_uri" character varying(2048) NOT NULL,
        "code_verifier" character varying(128) NOT NULL,
        "nonce" character varying(128) NOT NULL,
        "user_id" integer,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "social_login_states_pkey" PRIMARY KEY ("state_hash"),
        CONSTRAINT "social_login_states_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(`CREATE INDEX "social_login_states_expires_at_idx" ON "social_login_states" ("expires_at")`);
    await queryRunner.query(`CREATE INDEX "social_login_states_user_id_idx" ON "social_login_states" ("user_id")`);

    await queryRunner.query(`
      CREATE TABLE "social_identities" (
        "id" SERIAL NOT NULL,
        "provider" character varying(32) NOT NULL,
        "subject" character varying(255) NOT NULL,
        "user_id" integer NOT NULL,
        "email" character varying(254),
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "last_login_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "social_identities_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "social_identities_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX "social_identities_provider_subject_key" ON "social_identities" ("provider", "subject")`);
    await queryRunner.query(`CREATE INDEX "social_identities_user_id_idx" ON "social_identities" ("user_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "social_identities"`);
    await queryRunner.query(`DROP TABLE "social_login_states"`);
  }
}
