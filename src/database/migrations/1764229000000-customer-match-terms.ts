import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Google connections get `customer_match_terms_accepted` (SPEC 10.3), false for every existing
 * row: accepting Google's terms is an admin's act, never one a migration may assume. The check
 * keeps the flag off Meta connections. Which scopes a grant holds is already in `scopes`.
 */
export class CustomerMatchTerms1764229000000 implements MigrationInterface {
  name = 'CustomerMatchTerms1764229000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "connections" ADD "customer_match_terms_accepted" boolean NOT NULL DEFAULT false`);
    await queryRunner.query(
      `ALTER TABLE "connections" ADD CONSTRAINT "connections_customer_match_terms_check" CHECK ("platform" = 'google_ads' OR NOT "customer_match_terms_accepted")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "connections" DROP CONSTRAINT "connections_customer_match_terms_check"`);
    await queryRunner.query(`ALTER TABLE "connections" DROP COLUMN "customer_match_terms_accepted"`);
  }
}
