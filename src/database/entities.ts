import { AiModelInstance } from '../ai-model-instances/ai-model-instance.entity.js';
import { ApiKey } from '../api-keys/api-key.entity.js';
import { AudienceConnection } from '../audiences/audience-connection.entity.js';
import { Audience } from '../audiences/audience.entity.js';
import { AuthSession } from '../auth/auth-session.entity.js';
import { SocialIdentity } from '../auth/social/social-identity.entity.js';
import { SocialLoginState } from '../auth/social/social-login-state.entity.js';
import { IdempotencyKey } from '../common/idempotency/idempotency-key.entity.js';
import { Connection } from '../connections/connection.entity.js';
import { ConnectionFlowState } from '../connections/oauth/connection-flow-state.entity.js';
import { Customer } from '../customers/customer.entity.js';
import { McpToken } from '../mcp-tokens/mcp-token.entity.js';
import { Signal } from '../signals/signal.entity.js';
import { User } from '../users/user.entity.js';

/** Every entity, listed explicitly: globs do not work the same under ts-jest and the compiled build. */
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
];
