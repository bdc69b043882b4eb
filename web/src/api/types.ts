/** The service's objects as the web interface reads them (openapi.json is the full contract). */

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

interface Stamped {
  id: number;
  customer: number;
  created_at: string;
  updated_at: string;
}

export type Role = 'admin' | 'editor' | 'viewer';

export interface CurrentUser {
  id: number;
  email: string;
  customer: number;
  role: Role;
  date_joined: string;
}

export interface Audience extends Stamped {
  name: string;
  description: string;
  source_type: 'rules' | 'model' | 'upload';
  rules: Record<string, unknown>;
  model_instance: number | null;
  min_score: number | null;
  connections: number[];
  status: 'draft' | 'active' | 'archived';
  size: number | null;
}

export interface Signal extends Stamped {
  name: string;
  description: string;
  signal_type: 'conversion' | 'value' | 'score';
  status: number;
  model_instance: number | null;
  audience: number | null;
  connection: number | null;
  config: Record<string, unknown>;
}

export interface ModelInstance extends Stamped {
  name: string;
  model_type: 'propensity' | 'lifetime_value' | 'churn' | 'lookalike';
  base_model: string;
  parameters: Record<string, unknown>;
  status: 'pending' | 'training' | 'ready' | 'failed' | 'archived';
  metrics: Record<string, unknown>;
  version: number;
}

export interface Connection extends Stamped {
  platform: 'google_ads' | 'meta_ads';
  external_account_id: string;
  account_name: string;
  status: 'active' | 'expired' | 'revoked' | 'error';
  scopes: string[];
  connected_by: number | null;
  token_expires_at: string | null;
  last_refreshed_at: string | null;
  status_reason: string | null;
  reauthorize_required: boolean;
}

export interface McpToken {
  id: number;
  name: string;
  prefix: string;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
  token?: string;
}

export interface WebConfig {
  social_providers: string[];
  ad_platforms: string[];
}
