import type { MigrationInterface, QueryRunner } from 'typeorm';

const TABLES = ['audiences', 'signals', 'ai_model_instances', 'connections'];

/**
 * Exact row counts per workspace, resource and status, kept by statement-level triggers in the
 * same transaction as the change, so a list's `count` needs no COUNT(*) over a million rows when
 * it is filtered by nothing but status (the common case, and the one SPEC section 4 puts on every
 * page). Transition tables make a bulk insert one counter update per (workspace, status), not one
 * per row. Lists with other filters still count with COUNT(*) on their index.
 */
export class TenantCounts1763750000000 implements MigrationInterface {
  name = 'TenantCounts1763750000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "tenant_counts" (
        "customer_id" integer NOT NULL,
        "resource" character varying(32) NOT NULL,
        "status" character varying(16) NOT NULL,
        "count" bigint NOT NULL,
        CONSTRAINT "tenant_counts_pkey" PRIMARY KEY ("customer_id", "resource", "status"),
        CONSTRAINT "tenant_counts_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(`
      CREATE FUNCTION "tenant_counts_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
          INSERT INTO tenant_counts (customer_id, resource, status, count)
            SELECT customer_id, TG_TABLE_NAME, status::text, -count(*) FROM old_rows GROUP BY customer_id, status
          ON CONFLICT (customer_id, resource, status) DO UPDATE SET count = tenant_counts.count + EXCLUDED.count;
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
          INSERT INTO tenant_counts (customer_id, resource, status, count)
            SELECT customer_id, TG_TABLE_NAME, status::text, count(*) FROM new_rows GROUP BY customer_id, status
          ON CONFLICT (customer_id, resource, status) DO UPDATE SET count = tenant_counts.count + EXCLUDED.count;
        END IF;
        RETURN NULL;
      END $$`);
    for (const table of TABLES) {
      await queryRunner.query(
        `CREATE TRIGGER "${table}_count_insert" AFTER INSERT ON "${table}" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tenant_counts_apply()`,
      );
      await queryRunner.query(
        `CREATE TRIGGER "${table}_count_update" AFTER UPDATE ON "${table}" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tenant_counts_apply()`,
      );
      await queryRunner.query(
        `CREATE TRIGGER "${table}_count_delete" AFTER DELETE ON "${table}" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION tenant_counts_apply()`,
      );
      await queryRunner.query(
        `INSERT INTO tenant_counts (customer_id, resource, status, count) SELECT customer_id, '${table}', status::text, count(*) FROM "${table}" GROUP BY customer_id, status`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of TABLES) {
      for (const event of ['insert', 'update', 'delete']) await queryRunner.query(`DROP TRIGGER "${table}_count_${event}" ON "${table}"`);
    }
    await queryRunner.query(`DROP FUNCTION "tenant_counts_apply"()`);
    await queryRunner.query(`DROP TABLE "tenant_counts"`);
  }
}
