import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 27: `person_identifiers` loses its foreign key to `people`. PostgreSQL checked that key
 * once per inserted row (an import of 1M people inserts 10M hashes: 3.7 s of 7.9 s for 1M hashes
 * in EXPLAIN ANALYZE, and 10.7 s of 24.4 s for the 2M hashes of a 200k-row import).
 *
 * What the key gave is kept otherwise:
 * - an identifier row names a person that exists: every writer (the batch upsert, PATCH, the
 *   import merge) inserts only the ids of people it has just upserted or locked in the same
 *   transaction (test/people-privacy.e2e-spec.ts checks that no row is left without its person);
 * - the cascade: a statement-level trigger deletes the hashes of every person a DELETE removes,
 *   once per statement from its transition table, whatever removed them (erasure, or a
 *   customer's deletion cascading to its people), so no hash outlives its person.
 */
export class PersonIdentifiersWithoutForeignKey1764000000000 implements MigrationInterface {
  name = 'PersonIdentifiersWithoutForeignKey1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "person_identifiers" DROP CONSTRAINT "person_identifiers_person_fkey"`);
    await queryRunner.query(`
      CREATE FUNCTION "people_delete_identifiers"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM person_identifiers i USING gone_people g WHERE i.customer_id = g.customer_id AND i.person_id = g.id;
        RETURN NULL;
      END $$`);
    await queryRunner.query(
      `CREATE TRIGGER "people_delete_identifiers" AFTER DELETE ON "people" REFERENCING OLD TABLE AS gone_people FOR EACH STATEMENT EXECUTE FUNCTION people_delete_identifiers()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "people_delete_identifiers" ON "people"`);
    await queryRunner.query(`DROP FUNCTION "people_delete_identifiers"()`);
    await queryRunner.query(
      `ALTER TABLE "person_identifiers" ADD CONSTRAINT "person_identifiers_person_fkey" FOREIGN KEY ("customer_id", "person_id") REFERENCES "people"("customer_id", "id") ON DELETE CASCADE`,
    );
  }
}
