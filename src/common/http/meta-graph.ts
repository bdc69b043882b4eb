import { createHmac } from 'node:crypto';
import { objectOf } from './provider-call.js';

/**
 * Meta's Graph API, as Facebook Login and Meta Ads both use it.
 * `appsecret_proof`: HMAC-SHA256 of the access token under the app secret, which Graph checks on
 * every call made with a user token when "Require App Secret" is on.
 */
export function appSecretProof(appSecret: string, accessToken: string): string {
  return createHmac('sha256', appSecret).update(accessToken).digest('hex');
}

/** Graph's error type, code and subcode only (`OAuthException 190/460`): its message may quote what was sent. */
export function graphErrorReason(body: unknown): string {
  const error = objectOf(objectOf(body).error);
  const type = typeof error.type === 'string' ? error.type.slice(0, 64) : 'error';
  const code = typeof error.code === 'number' ? ` ${error.code}` : '';
  const subcode = typeof error.error_subcode === 'number' ? `/${error.error_subcode}` : '';
  return `${type}${code}${subcode}`;
}
