import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Every id, and every column that holds one, as `table: [columns]`. */
const ID_COLUMNS: Record<string, string[]> = {
  customers: ['id'],
  users: ['id', 'customer_id'],
  auth_sessions: ['user_id', 'customer_id'],
  api_keys: ['customer_id', 'id', 'replaced_by_id'],
  connections: ['customer_id', 'id', 'connected_by'],
  ai_model_instances: ['customer_id', 'id'],
  audiences: ['customer_id', 'id', 'model_instance_id'],
  audience_connections: ['customer_id', 'audience_id', 'connection_id'],
  signals: ['customer_id', 'id', 'model_instance_id', 'audience_id', 'connection_id'],
  mcp_tokens: ['customer_id', 'id', 'user_id'],
  idempotency_keys: ['customer_id'],
  tenant_counts: ['customer_id'],
  social_identities: ['id', 'user_id'],
  social_login_states: ['user_id'],
  connection_flow_states: ['customer_id', 'user_id'],
};

const SEQUENCES = [
  'customers_id_seq',
  'users_id_seq',
  'api_keys_id_seq',
  'connections_id_seq',
  'ai_model_instances_id_seq',
  'audiences_id_seq',
  'signals_id_seq',
  'mcp_tokens_id_seq',
  'social_identities_id_seq',
];

/**
 * Ids become `bigint` while the tables are small (docs/scale-out.md): a 32-bit id runs out at
 * 2.1 billion rows. One ALTER per table changes all its id columns in a single rewrite; foreign
 * keys between int and bigint columns stay valid in between, and the sequences follow.
 * The application reads int8 as a JavaScript number (`parseInt8`; ids stay below 2^53).
 */
export class BigintIds1763790000000 implements MigrationInterface {
  name = 'BigintIds1763790000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const [table, columns] of Object.entries(ID_COLUMNS)) {
      await queryRunner.query(`ALTER TABLE "${table}" ${columns.map((column) => `ALTER COLUMN "${column}" TYPE bigint`).join(', ')}`);
    }
    for (const sequence of SEQUENCES) await queryRunner.query(`ALTER SEQUENCE "${sequence}" AS bigint`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const sequence of SEQUENCES) await queryRunner.query(`ALTER SEQUENCE "${sequence}" AS integer`);
    for (const [table, columns] of Object.entries(ID_COLUMNS).reverse()) {
      await queryRunner.query(`ALTER TABLE "${table}" ${columns.map((column) => `ALTER COLUMN "${column}" TYPE integer`).join(', ')}`);
    }
  }
}
