import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `sync_sent_members.removal_request_id`: the Google removal request a sent row waits on. Google
 * answers a removal with a request id and gives its verdict later (`requestStatus:retrieve`), so a
 * removed person's row stays, with its hashes, until that verdict: a success drops it, a failure
 * clears the id and the next sync removes the person again. Before this, the row went when the
 * request was accepted, and a failed removal left the person on the Google list unnoticed.
 * The partial index holds only the rows waiting on a verdict.
 */
export class SyncRemovalRequests1764330000000 implements MigrationInterface {
  name = 'SyncRemovalRequests1764330000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "sync_sent_members" ADD "removal_request_id" character varying(128)`);
    await queryRunner.query(
      `CREATE INDEX "sync_sent_members_removal_request_idx" ON "sync_sent_members" ("customer_id", "audience_id", "connection_id", "removal_request_id") WHERE "removal_request_id" IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "sync_sent_members_removal_request_idx"`);
    await queryRunner.query(`ALTER TABLE "sync_sent_members" DROP COLUMN "removal_request_id"`);
  }
}
