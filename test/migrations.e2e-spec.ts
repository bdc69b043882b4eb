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
