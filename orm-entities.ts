import { AiModelInstance } from './src/ai-model-instances/ai-model-instance.entity.js';
import { ApiKey } from './src/api-keys/api-key.entity.js';
import { AudienceConnection } from './src/audiences/audience-connection.entity.js';
import { AudienceDestination } from './src/audiences/audience-destination.entity.js';
import { Audience } from './src/audiences/audience.entity.js';
import { AuthSession } from './src/auth/auth-session.entity.js';
import { SocialIdentity } from './src/auth/social/social-identity.entity.js';
import { SocialLoginState } from './src/auth/social/social-login-state.entity.js';
import { IdempotencyKey } from './src/idempotency/idempotency-key.entity.js';
import { Connection } from './src/connections/connection.entity.js';
import { ConnectionFlowState } from './src/connections/oauth/connection-flow-state.entity.js';
import { Customer } from './src/customers/customer.entity.js';
import { AudienceMember } from './src/memberships/audience-member.entity.js';
import { ModelScore } from './src/memberships/model-score.entity.js';
import { McpToken } from './src/mcp-tokens/mcp-token.entity.js';
import { ImportRow } from './src/imports/import-row.entity.js';
import { Import } from './src/imports/import.entity.js';
import { Person } from './src/people/person.entity.js';
import { SignalEvent } from './src/signal-events/signal-event.entity.js';
import { SignalDelivery } from './src/signals/signal-delivery.entity.js';
import { Signal } from './src/signals/signal.entity.js';
import { SyncRateBudget } from './src/syncs/sync-rate-budget.entity.js';
import { SyncRun } from './src/syncs/sync-run.entity.js';
import { SyncSentMember } from './src/syncs/sync-sent-member.entity.js';
import { User } from './src/users/user.entity.js';

import { Webhook } from './src/webhooks/webhook.entity.js';
import { WebhookDelivery } from './src/webhooks/webhook-delivery.entity.js';

/**
 * Every entity, listed explicitly, for the DataSources that Nest does not build: TypeORM's
 * migration CLI (ormconfig.ts) and the tests' own connections. The application
 * itself registers each entity in its feature module (`TypeOrmModule.forFeature`, with
 * `autoLoadEntities`), so nothing under src/ needs this list. Globs do not work the same under
 * ts-jest and the compiled build, hence the list. A test checks it names every entity file.
 */
export const ENTITIES = [
  Customer,
  User,
  AuthSession,
  ApiKey,
  Connection,
  AiModelInstance,
  Audience,
  AudienceConnection,
  Signal,
  McpToken,
  IdempotencyKey,
  SocialLoginState,
  SocialIdentity,
  ConnectionFlowState,
  Person,
  Import,
  ImportRow,
  AudienceMember,
  ModelScore,
  AudienceDestination,
  SyncRun,
  SyncSentMember,
  SyncRateBudget,
  SignalEvent,
  SignalDelivery,
  Webhook,
  WebhookDelivery,
];
