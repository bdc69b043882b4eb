import { CustomersAndUsers1763700000000 } from './1763700000000-customers-and-users.js';
import { AuthSessionsAndApiKeys1763710000000 } from './1763710000000-auth-sessions-and-api-keys.js';
import { WorkspaceResources1763720000000 } from './1763720000000-workspace-resources.js';
import { McpTokens1763730000000 } from './1763730000000-mcp-tokens.js';
import { IdempotencyKeys1763740000000 } from './1763740000000-idempotency-keys.js';
import { TenantCounts1763750000000 } from './1763750000000-tenant-counts.js';
import { TenantCountsOnStatusChange1763760000000 } from './1763760000000-tenant-counts-on-status-change.js';
import { SocialLogin1763770000000 } from './1763770000000-social-login.js';
import { ConnectionOauthFlows1763780000000 } from './1763780000000-connection-oauth-flows.js';
import { BigintIds1763790000000 } from './1763790000000-bigint-ids.js';
import { People1763800000000 } from './1763800000000-people.js';
import { AudienceMembers1764100000000 } from './1764100000000-audience-members.js';
import { Imports1763900000000 } from './1763900000000-imports.js';
import { PersonIdentifiersWithoutForeignKey1764000000000 } from './1764000000000-person-identifiers-without-foreign-key.js';
import { CustomerMatchTerms1764229000000 } from './1764229000000-customer-match-terms.js';
import { Webhooks1764300000000 } from './1764300000000-webhooks.js';
import { SignalEvents1764310000000 } from './1764310000000-signal-events.js';
import { Syncs1764320000000 } from './1764320000000-syncs.js';
import { PackedPersonIdentifiers1764400000000 } from './1764400000000-packed-person-identifiers.js';
import { SyncRemovalRequests1764330000000 } from './1764330000000-sync-removal-requests.js';

/** Applied in this order, at start and by `npm run migrate`. New migrations are appended here. */
export const MIGRATIONS = [
  CustomersAndUsers1763700000000,
  AuthSessionsAndApiKeys1763710000000,
  WorkspaceResources1763720000000,
  McpTokens1763730000000,
  IdempotencyKeys1763740000000,
  TenantCounts1763750000000,
  TenantCountsOnStatusChange1763760000000,
  SocialLogin1763770000000,
  ConnectionOauthFlows1763780000000,
  BigintIds1763790000000,
  People1763800000000,
  Imports1763900000000,
  PersonIdentifiersWithoutForeignKey1764000000000,
  AudienceMembers1764100000000,
  CustomerMatchTerms1764229000000,
  Webhooks1764300000000,
  SignalEvents1764310000000,
  Syncs1764320000000,
  SyncRemovalRequests1764330000000,
  PackedPersonIdentifiers1764400000000,
];
