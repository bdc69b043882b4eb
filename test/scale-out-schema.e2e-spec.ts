import { TABLE_DISTRIBUTION } from '../src/database/distribution.js';
import { bearer, createUser, createWorkspace, json, login } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

interface Constraint {
  table: string;
  type: 'p' | 'u' | 'f';
  name: string;
  columns: string[];
  referenced: string | null;
}

/**
 * What the path to Citus (docs/scale-out.md) needs from the schema as it is today: every table
 * classified, and the distributed ones keyed by `customer_id` throughout, so that
 * `create_distributed_table(…, 'customer_id')` can be run on them as they are.
 */
describe('schema ready to distribute by customer_id', () => {
  let database: TestDatabase;
  let constraints: Constraint[];
  let uniqueIndexes: { table: string; name: string; definition: string }[];
  let tables: string[];
  beforeAll(async () => {
    database = await createTestDatabase();
    tables = (
      (await database.dataSource.query(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
      )) as { table_name: string }[]
    ).map((row) => row.table_name);
    constraints = await database.dataSource.query(`
      SELECT c.conrelid::regclass::text AS "table", c.contype AS type, c.conname AS name,
             ARRAY(SELECT a.attname FROM unnest(c.conkey) k JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k)::text[] AS columns,
             CASE WHEN c.contype = 'f' THEN c.confrelid::regclass::text END AS referenced
        FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
       WHERE n.nspname = 'public' AND c.contype IN ('p', 'u', 'f')`);
    uniqueIndexes = await database.dataSource.query(
      `SELECT tablename AS "table", indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = 'public' AND indexdef LIKE 'CREATE UNIQUE INDEX%'`,
    );
  });
  afterAll(() => database.drop());

  const distributed = new Set<string>(TABLE_DISTRIBUTION.distributed);

  it('classifies every table exactly once', () => {
    const classified = [...TABLE_DISTRIBUTION.distributed, ...TABLE_DISTRIBUTION.reference, ...TABLE_DISTRIBUTION.local];
    expect(new Set(classified).size).toBe(classified.length);
    expect([...classified].sort()).toEqual([...tables].sort());
  });

  it('keys every distributed table by customer_id: primary key, unique indexes, references between them', () => {
    const problems: string[] = [];
    for (const constraint of constraints.filter((candidate) => distributed.has(candidate.table))) {
      if (constraint.type === 'f' && !distributed.has(constraint.referenced!)) continue; // to a reference table: allowed
      if (!constraint.columns.includes('customer_id'))
        problems.push(`${constraint.table}.${constraint.name} (${constraint.columns.join(', ')})`);
    }
    for (const index of uniqueIndexes.filter((candidate) => distributed.has(candidate.table))) {
      if (!/\(customer_id[,)]/.test(index.definition)) problems.push(`${index.table}.${index.name}`);
    }
    expect(problems).toEqual([]);
  });

  it('has no reference or local table point at a distributed one (Citus cannot enforce such a key)', () => {
    const wrong = constraints
      .filter((constraint) => constraint.type === 'f' && !distributed.has(constraint.table) && distributed.has(constraint.referenced!))
      .map((constraint) => `${constraint.table}.${constraint.name}`);
    expect(wrong).toEqual([]);
  });

  it('keeps the global keys (credential prefixes, emails, sessions) on reference tables only', () => {
    const globalUnique = uniqueIndexes.filter((index) => !/\(customer_id[,)]/.test(index.definition)).map((index) => index.table);
    for (const table of globalUnique)
      expect({ table, placement: distributed.has(table) ? 'distributed' : 'reference or local' }).toEqual({
        table,
        placement: 'reference or local',
      });
  });
});

describe('bigint ids', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp();
  });
  afterAll(() => api.close());

  it('stores every id, and every column that holds one, as bigint', async () => {
    const columns: { table_name: string; column_name: string; data_type: string }[] = await api.dataSource.query(
      `SELECT table_name, column_name, data_type FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name <> 'typeorm_migrations'
          AND (column_name = 'id' OR column_name LIKE '%\\_id' OR column_name IN ('connected_by'))
          AND data_type IN ('integer', 'bigint', 'smallint')`,
    );
    expect(columns.length).toBeGreaterThan(30);
    expect(columns.filter((column) => column.data_type !== 'bigint').map((column) => `${column.table_name}.${column.column_name}`)).toEqual(
      [],
    );
  });

  it('serves ids past 2^31 as JSON numbers through the API', async () => {
    await api.dataSource.query(`SELECT setval('audiences_id_seq', 3000000000)`);
    const user = await createUser(api, await createWorkspace(api));
    const access = (await login(api, user)).access;
    const created = await api.request('/api/v1/audiences/', json({ name: 'Past 32 bits', source_type: 'rules' }, bearer(access)));
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    expect(id).toBe(3000000001);
    const read = await api.request(`/api/v1/audiences/${id}/`, { headers: bearer(access) });
    expect(((await read.json()) as { id: unknown }).id).toBe(3000000001);
    const listed = (await (await api.request('/api/v1/audiences/', { headers: bearer(access) })).json()) as {
      count: number;
      results: { id: unknown }[];
    };
    expect(listed).toMatchObject({ count: 1, results: [{ id: 3000000001 }] });
  });
});
