import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A kind's byte (IDENTIFIER_KIND_CODES in src/people/person-identifiers.ts) as a one-byte bytea. */
const KIND_BYTE = (kind: string) =>
  `CASE ${kind} WHEN 'email' THEN '\\x01'::bytea WHEN 'phone' THEN '\\x02'::bytea WHEN 'first_name' THEN '\\x03'::bytea
     WHEN 'last_name' THEN '\\x04'::bytea WHEN 'country' THEN '\\x05'::bytea ELSE '\\x06'::bytea END`;

/**
 * Issue 27: a person's hashes move from `person_identifiers` (one row per hash: 10 rows a person,
 * 10M rows for an import of 1M, most of its merge) onto the person's own row, one packed value per
 * platform: `people.google_identifiers` and `people.meta_identifiers`, each hash as its kind's byte
 * and its 32 bytes, sorted by kind name, then hash. That is the form the sync already built per
 * person and keeps in `sync_sent_members.identifiers`, so what was sent compares byte for byte.
 * With the hashes on the row, erasure and a workspace's deletion take them with the person, and the
 * trigger that stood in for the dropped foreign key goes.
 *
 * Two functions give the import's set-based merge what person-identifiers.ts gives the batch:
 * `person_identifier_kinds` (the kinds a packed value holds) and `merged_person_identifiers` (the
 * stored hashes of the kinds a write does not name, and the write's). `import_rows` stages the
 * packed values too, with the row's own matched keys; staged rows of an import still waiting are
 * converted.
 */
export class PackedPersonIdentifiers1764400000000 implements MigrationInterface {
  name = 'PackedPersonIdentifiers1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION "person_identifier_kind"(code integer) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE code WHEN 1 THEN 'email' WHEN 2 THEN 'phone' WHEN 3 THEN 'first_name' WHEN 4 THEN 'last_name'
          WHEN 5 THEN 'country' WHEN 6 THEN 'zip' END
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION "person_identifier_kinds"(packed bytea) RETURNS text[] LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
      DECLARE
        kinds text[] := '{}';
      BEGIN
        FOR n IN 0 .. length(packed) / 33 - 1 LOOP
          kinds := kinds || person_identifier_kind(get_byte(packed, n * 33));
        END LOOP;
        RETURN kinds;
      END $$`);
    await queryRunner.query(`
      CREATE FUNCTION "merged_person_identifiers"(stored bytea, named text[], given bytea) RETURNS bytea
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT coalesce(string_agg(x.record, ''::bytea ORDER BY x.kind, x.record), ''::bytea) FROM (
          SELECT substring(stored FROM n * 33 + 1 FOR 33) AS record, person_identifier_kind(get_byte(stored, n * 33)) AS kind
            FROM generate_series(0, length(stored) / 33 - 1) AS n
           WHERE NOT person_identifier_kind(get_byte(stored, n * 33)) = ANY(named)
          UNION ALL
          SELECT substring(given FROM n * 33 + 1 FOR 33), person_identifier_kind(get_byte(given, n * 33))
            FROM generate_series(0, length(given) / 33 - 1) AS n) x
      $$`);

    await queryRunner.query(`ALTER TABLE "people" ADD "google_identifiers" bytea NOT NULL DEFAULT ''`);
    await queryRunner.query(`ALTER TABLE "people" ADD "meta_identifiers" bytea NOT NULL DEFAULT ''`);
    await queryRunner.query(`
      UPDATE people p SET google_identifiers = x.google, meta_identifiers = x.meta
      FROM (
        SELECT customer_id, person_id,
          coalesce(string_agg(${KIND_BYTE('kind')} || hash, ''::bytea ORDER BY kind, hash) FILTER (WHERE platform = 'google'), '') AS google,
          coalesce(string_agg(${KIND_BYTE('kind')} || hash, ''::bytea ORDER BY kind, hash) FILTER (WHERE platform = 'meta'), '') AS meta
        FROM person_identifiers GROUP BY customer_id, person_id) x
      WHERE p.customer_id = x.customer_id AND p.id = x.person_id`);
    await queryRunner.query(
      `ALTER TABLE "people" ADD CONSTRAINT "people_google_identifiers_check" CHECK (octet_length("google_identifiers") % 33 = 0)`,
    );
    await queryRunner.query(
      `ALTER TABLE "people" ADD CONSTRAINT "people_meta_identifiers_check" CHECK (octet_length("meta_identifiers") % 33 = 0)`,
    );
    await queryRunner.query(`DROP TRIGGER "people_delete_identifiers" ON "people"`);
    await queryRunner.query(`DROP FUNCTION "people_delete_identifiers"()`);
    await queryRunner.query(`DROP TABLE "person_identifiers"`);

    await queryRunner.query(`ALTER TABLE "import_rows" ADD "google_identifiers" bytea NOT NULL DEFAULT ''`);
    await queryRunner.query(`ALTER TABLE "import_rows" ADD "meta_identifiers" bytea NOT NULL DEFAULT ''`);
    await queryRunner.query(`ALTER TABLE "import_rows" ADD "matched_keys" text array NOT NULL DEFAULT '{}'`);
    await queryRunner.query(`
      UPDATE import_rows r SET google_identifiers = x.google, meta_identifiers = x.meta,
        matched_keys = array_remove(ARRAY[
          CASE WHEN 'google:email' = ANY(r.hash_tags) THEN 'email' END,
          CASE WHEN 'google:phone' = ANY(r.hash_tags) THEN 'phone' END,
          CASE WHEN 'google:first_name' = ANY(r.hash_tags) AND 'google:last_name' = ANY(r.hash_tags)
            AND r.country_code IS NOT NULL AND r.postal_code IS NOT NULL THEN 'address' END,
          CASE WHEN r.mobile_ad_id IS NOT NULL THEN 'mobile_ad_id' END], NULL)
      FROM (
        SELECT s.customer_id, s.import_id, s.line,
          coalesce(string_agg(${KIND_BYTE('h.kind')} || h.hash, ''::bytea ORDER BY h.kind, h.hash) FILTER (WHERE h.platform = 'google'), '') AS google,
          coalesce(string_agg(${KIND_BYTE('h.kind')} || h.hash, ''::bytea ORDER BY h.kind, h.hash) FILTER (WHERE h.platform = 'meta'), '') AS meta
        FROM import_rows s
        CROSS JOIN LATERAL (
          SELECT split_part(t.tag, ':', 1) AS platform, split_part(t.tag, ':', 2) AS kind, substring(s.hashes FROM (t.n::int - 1) * 32 + 1 FOR 32) AS hash
          FROM unnest(s.hash_tags) WITH ORDINALITY AS t(tag, n)) h
        GROUP BY s.customer_id, s.import_id, s.line) x
      WHERE r.customer_id = x.customer_id AND r.import_id = x.import_id AND r.line = x.line`);
    await queryRunner.query(`ALTER TABLE "import_rows" ALTER "google_identifiers" DROP DEFAULT`);
    await queryRunner.query(`ALTER TABLE "import_rows" ALTER "meta_identifiers" DROP DEFAULT`);
    await queryRunner.query(`ALTER TABLE "import_rows" ALTER "matched_keys" DROP DEFAULT`);
    await queryRunner.query(`ALTER TABLE "import_rows" DROP COLUMN "hash_tags"`);
    await queryRunner.query(`ALTER TABLE "import_rows" DROP COLUMN "hashes"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "import_rows" ADD "hash_tags" text array NOT NULL DEFAULT '{}'`);
    await queryRunner.query(`ALTER TABLE "import_rows" ADD "hashes" bytea NOT NULL DEFAULT ''`);
    await queryRunner.query(`
      UPDATE import_rows r SET hash_tags = x.tags, hashes = x.hashes
      FROM (
        SELECT s.customer_id, s.import_id, s.line, array_agg(h.platform || ':' || h.kind ORDER BY h.platform, h.n) AS tags,
          string_agg(h.hash, ''::bytea ORDER BY h.platform, h.n) AS hashes
        FROM import_rows s
        CROSS JOIN LATERAL (
          SELECT p.platform, n, person_identifier_kind(get_byte(p.packed, n * 33)) AS kind, substring(p.packed FROM n * 33 + 2 FOR 32) AS hash
          FROM (VALUES ('google', s.google_identifiers), ('meta', s.meta_identifiers)) AS p(platform, packed),
               generate_series(0, length(p.packed) / 33 - 1) AS n) h
        GROUP BY s.customer_id, s.import_id, s.line) x
      WHERE r.customer_id = x.customer_id AND r.import_id = x.import_id AND r.line = x.line`);
    await queryRunner.query(`ALTER TABLE "import_rows" ALTER "hash_tags" DROP DEFAULT`);
    await queryRunner.query(`ALTER TABLE "import_rows" ALTER "hashes" DROP DEFAULT`);
    await queryRunner.query(`ALTER TABLE "import_rows" DROP COLUMN "matched_keys"`);
    await queryRunner.query(`ALTER TABLE "import_rows" DROP COLUMN "meta_identifiers"`);
    await queryRunner.query(`ALTER TABLE "import_rows" DROP COLUMN "google_identifiers"`);

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
        CONSTRAINT "person_identifiers_kind_check" CHECK ("kind" IN ('email', 'phone', 'first_name', 'last_name', 'country', 'zip'))
      )`);
    await queryRunner.query(`
      INSERT INTO person_identifiers (customer_id, person_id, platform, kind, hash)
      SELECT p.customer_id, p.id, x.platform, person_identifier_kind(get_byte(x.packed, n * 33)), substring(x.packed FROM n * 33 + 2 FOR 32)
      FROM people p
      CROSS JOIN LATERAL (VALUES ('google', p.google_identifiers), ('meta', p.meta_identifiers)) AS x(platform, packed)
      CROSS JOIN LATERAL generate_series(0, length(x.packed) / 33 - 1) AS n`);
    await queryRunner.query(`
      CREATE FUNCTION "people_delete_identifiers"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM person_identifiers i USING gone_people g WHERE i.customer_id = g.customer_id AND i.person_id = g.id;
        RETURN NULL;
      END $$`);
    await queryRunner.query(
      `CREATE TRIGGER "people_delete_identifiers" AFTER DELETE ON "people" REFERENCING OLD TABLE AS gone_people FOR EACH STATEMENT EXECUTE FUNCTION people_delete_identifiers()`,
    );
    await queryRunner.query(`ALTER TABLE "people" DROP CONSTRAINT "people_meta_identifiers_check"`);
    await queryRunner.query(`ALTER TABLE "people" DROP CONSTRAINT "people_google_identifiers_check"`);
    await queryRunner.query(`ALTER TABLE "people" DROP COLUMN "meta_identifiers"`);
    await queryRunner.query(`ALTER TABLE "people" DROP COLUMN "google_identifiers"`);
    await queryRunner.query(`DROP FUNCTION "merged_person_identifiers"(bytea, text[], bytea)`);
    await queryRunner.query(`DROP FUNCTION "person_identifier_kinds"(bytea)`);
    await queryRunner.query(`DROP FUNCTION "person_identifier_kind"(integer)`);
  }
}
