import type { Connection } from './connection.entity.js';

/** Google Ads API: accounts, names, conversions (SPEC section 6). */
export const ADWORDS_SCOPE = 'https://www.googleapis.com/auth/adwords';
/** Data Manager API: audience members and request status (SPEC 10.3); a token without it gets 403. */
export const DATAMANAGER_SCOPE = 'https://www.googleapis.com/auth/datamanager';
/** What the Google flow asks for; a grant without `adwords` makes no connection at all. */
export const GOOGLE_ADS_SCOPES = [ADWORDS_SCOPE, DATAMANAGER_SCOPE] as const;

type ReadinessFields = Pick<Connection, 'platform' | 'status' | 'statusReason' | 'scopes'>;

/**
 * An active Google connection whose grant lacks `datamanager` (SPEC 10.3): made before the flow
 * asked for it, by the CLI (no grant here at all), or with the box unticked on Google's consent
 * screen. It stays `active` (conversions through the Google Ads API still work and its signals
 * keep running) but cannot sync audiences until someone reconnects it.
 */
export function lacksDataManagerScope(connection: ReadinessFields): boolean {
  return connection.platform === 'google_ads' && !connection.scopes.includes(DATAMANAGER_SCOPE);
}

/**
 * The connection's `status_reason` as the API shows it: the stored cause of a non-active status
 * first (a lost grant is the bigger problem, and reconnecting fixes both), else `scope_missing`
 * for a Google grant without `datamanager`, else null. Derived rather than stored, so a refresh
 * or a reconnect that brings the scope clears it with no second write to forget.
 */
export function statusReasonOf(connection: ReadinessFields): string | null {
  if (connection.status !== 'active') return connection.statusReason ?? null;
  return lacksDataManagerScope(connection) ? 'scope_missing' : null;
}

/** True when only a new OAuth grant helps: the grant is gone, or it lacks a scope the data plane needs. */
export function reauthorizeRequired(connection: ReadinessFields): boolean {
  return connection.status === 'expired' || connection.status === 'revoked' || lacksDataManagerScope(connection);
}
