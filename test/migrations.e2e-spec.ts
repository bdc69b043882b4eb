import { createHash } from 'node:crypto';
import { type IdentifierKind, packIdentifiers } from '../src/people/person-identifiers.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

/** Entities and migrations must describe the same schema: a change to one without the other fails here. */
describe('migrations', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('leave nothing for TypeORM to synchronise after they have run', async () => {
    const pending = await database.dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((query) => query.query)).toEqual([]);
  });

  it('can be reverted and applied again', async () => {
    const { dataSource } = database;
    const applied = dataSource.migrations.length;
    for (let step = 0; step < applied; step++) await dataSource.undoLastMigration();
    expect(await dataSource.showMigrations()).toBe(true);
    await dataSource.runMigrations();
    expect(await dataSource.showMigrations()).toBe(false);
  });
});

/**
 * Migration 1764400000000 packs `person_identifiers` rows onto `people`: a person written before
 * it keeps every hash, in the order the sync compared, and undoing it gives the rows back.
 */
describe('packed person identifiers (migration 1764400000000)', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  const hash = (text: string) => createHash('sha256').update(text).digest();

  it('moves each hash onto its person and back', async () => {
    const { dataSource } = database;
    await dataSource.undoLastMigration();
    const [{ id: customerId }] = await dataSource.query(`INSERT INTO customers (name) VALUES ('packing') RETURNING id`);
    const [{ id: personId }] = await dataSource.query(
      `INSERT INTO people (customer_id, external_id, matched_keys) VALUES ($1, 'p-1', '{email,phone}') RETURNING id`,
      [customerId],
    );
    const rows: [string, string, Buffer][] = [
      ['google', 'phone', hash('+14155550100')],
      ['google', 'email', hash('b@example.com')],
      ['google', 'email', hash('a@example.com')],
      ['meta', 'zip', hash('94043')],
      ['meta', 'country', hash('us')],
    ];
    for (const [platform, kind, value] of rows)
      await dataSource.query('INSERT INTO person_identifiers (customer_id, person_id, platform, kind, hash) VALUES ($1, $2, $3, $4, $5)', [
        customerId,
        personId,
        platform,
        kind,
        value,
      ]);
    await dataSource.runMigrations();

    const [person] = await dataSource.query('SELECT google_identifiers, meta_identifiers FROM people WHERE id = $1', [personId]);
    const expected = (platform: string) =>
      packIdentifiers(rows.filter(([p]) => p === platform).map(([, kind, value]) => ({ kind: kind as IdentifierKind, hash: value })));
    expect(person.google_identifiers).toEqual(expected('google'));
    expect(person.meta_identifiers).toEqual(expected('meta'));

    await dataSource.undoLastMigration();
    const back: { platform: string; kind: string; hash: Buffer }[] = await dataSource.query(
      'SELECT platform, kind, hash FROM person_identifiers WHERE person_id = $1 ORDER BY platform, kind, hash',
      [personId],
    );
    expect(back.map((row) => [row.platform, row.kind, row.hash.toString('hex')])).toEqual(
      [...rows].map(([p, k, v]) => [p, k, v.toString('hex')]).sort((a, b) => (a.join() < b.join() ? -1 : 1)),
    );
    await dataSource.runMigrations();
  });
});
