import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Audience members and model scores (SPEC 10.2). Both lead with the workspace. Model scores
 * reference their model and person by composite keys and go with them (ON DELETE CASCADE).
 * Audience members have no foreign keys: PostgreSQL checks a foreign key once per inserted row,
 * and the two checks took 9.2 of 16.5 s of a 466,668-member first recompute at 1M people
 * (docs/architecture.md, "Audience members"); the code keeps them instead (see AudienceMember).
 * A person's audiences are read through `audience_members_customer_person_idx`.
 */
export class AudienceMembers1764100000000 implements MigrationInterface {
  name = 'AudienceMembers1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "audiences" ADD "members_updated_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`
      CREATE TABLE "audience_members" (
        "customer_id" bigint NOT NULL,
        "audience_id" bigint NOT NULL,
        "person_id" bigint NOT NULL,
        "added_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "audience_members_pkey" PRIMARY KEY ("customer_id", "audience_id", "person_id")
      )`);
    await queryRunner.query(
      `CREATE INDEX "audience_members_customer_person_idx" ON "audience_members" ("customer_id", "person_id", "audience_id")`,
    );
    await queryRunner.query(`
      CREATE TABLE "model_scores" (
        "customer_id" bigint NOT NULL,
        "model_instance_id" bigint NOT NULL,
        "person_id" bigint NOT NULL,
        "version" integer NOT NULL,
        "score" double precision NOT NULL,
        "scored_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "model_scores_pkey" PRIMARY KEY ("customer_id", "model_instance_id", "person_id"),
        CONSTRAINT "model_scores_score_check" CHECK ("score" >= 0 AND "score" <= 1),
        CONSTRAINT "model_scores_model_instance_fkey" FOREIGN KEY ("customer_id", "model_instance_id")
          REFERENCES "ai_model_instances"("customer_id", "id") ON DELETE CASCADE,
        CONSTRAINT "model_scores_person_fkey" FOREIGN KEY ("customer_id", "person_id")
          REFERENCES "people"("customer_id", "id") ON DELETE CASCADE
      )`);
    await queryRunner.query(`CREATE INDEX "model_scores_customer_person_idx" ON "model_scores" ("customer_id", "person_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "model_scores"`);
    await queryRunner.query(`DROP TABLE "audience_members"`);
    await queryRunner.query(`ALTER TABLE "audiences" DROP COLUMN "members_updated_at"`);
  }
}
