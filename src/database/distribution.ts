/**
 * How each table would be placed on a Citus cluster (docs/scale-out.md), kept next to the schema
 * so that a new table must be classified: test/scale-out-schema checks the schema against it.
 *
 * - `distributed` (by `customer_id`): workspace data. Its primary key and unique indexes include
 *   `customer_id`, and its references to other distributed tables are composite
 *   `(customer_id, x_id)`, so every statement of one workspace runs on one shard.
 * - `reference`: small tables read before a request knows its workspace (credentials found by
 *   prefix, email or session id) or by every workspace; replicated to every node, so their
 *   global keys (a prefix, an email) stay unique.
 * - `local`: the coordinator's own bookkeeping and transient OAuth states, never joined with
 *   workspace data.
 */
export const TABLE_DISTRIBUTION = {
  distributed: [
    'ai_model_instances',
    'audiences',
    'audience_connections',
    'connections',
    'signals',
    'idempotency_keys',
    'tenant_counts',
    'people',
    'imports',
    'import_rows',
    'audience_members',
    'model_scores',
    'sync_runs',
    'audience_destinations',
    'sync_sent_members',
    'signal_events',
    'signal_deliveries',
    'webhooks',
    'webhook_deliveries',
  ],
  reference: ['customers', 'users', 'api_keys', 'mcp_tokens', 'auth_sessions', 'social_identities'],
  // OAuth flows in progress: found by their state alone, before the workspace is known, and
  // short-lived; they stay on the coordinator (citus_add_local_table_to_metadata keeps their keys
  // to the reference tables).
  // The sync rate budgets belong to ad accounts and the deployment's Google project, not to a workspace.
  local: ['social_login_states', 'connection_flow_states', 'typeorm_migrations', 'sync_rate_budgets'],
} as const;
