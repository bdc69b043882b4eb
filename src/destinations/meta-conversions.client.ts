import { appSecretProof } from '../common/http/meta-graph.js';
import { objectOf, providerCall, ProviderUnreachableError } from '../common/http/provider-call.js';
import type { AppConfig } from '../config/app-config.js';
import { type DestinationOutcome, failed, HEX_SHA256, succeeded, unreachable } from './destination-types.js';
import { classifyMetaFailure } from './meta-custom-audiences.client.js';

/**
 * Meta's Conversions API (SPEC 10.4): `POST {META_GRAPH_URL}/{pixel_id}/events` with the
 * connection's access token and, when the app secret is configured, `appsecret_proof`.
 *
 * Implements, from developers.facebook.com/docs/marketing-api/conversions-api/using-the-api (the
 * `/events` edge, `data` of up to 1,000 events, `test_event_code` routing a request to Events
 * Manager's Test Events; one invalid event fails the whole request), …/conversions-api/parameters/
 * server-event (`event_name`, `event_time` in Unix seconds at most 7 days old — one older event
 * fails the whole request —, `event_id` which with `event_name` deduplicates within 48 hours,
 * `action_source`, `event_source_url`; `user_data` required), …/parameters/customer-information-parameters
 * (`em`, `ph`, `fn`, `ln`, `ct`, `st`, `zp`, `country`, `external_id` SHA-256 of the normalised
 * value; `client_ip_address`, `client_user_agent`, `fbc`, `fbp` and `madid` never hashed) and
 * …/parameters/custom-data (`value`, `currency`), with the field list of
 * facebook/facebook-nodejs-business-sdk `src/objects/serverside/server-event.js`. The answer is
 * `{events_received, messages, fbtrace_id}`. Errors have Graph's shape and are classified as for
 * custom audiences (classifyMetaFailure): throttling codes retried, 190 the grant, code 100 with
 * subcode 33 (no such object: an unknown pixel) `not_found`, 10/200/294 `permission_denied`,
 * any other 100 an invalid request — which the caller splits until the bad event is alone.
 */

export const META_MAX_EVENTS_PER_REQUEST = 1_000;
/** Meta refuses a request with an event older than 7 days (SPEC 10.4). */
export const META_EVENT_MAX_AGE_DAYS = 7;

export interface MetaUserData {
  em?: string[];
  ph?: string[];
  fn?: string;
  ln?: string;
  zp?: string;
  country?: string;
  external_id?: string[];
  client_ip_address?: string;
  client_user_agent?: string;
  fbc?: string;
  fbp?: string;
  madid?: string;
}

/** One server event as the Conversions API takes it. */
export interface MetaServerEvent {
  event_name: string;
  event_time: number;
  event_id: string;
  action_source: string;
  event_source_url?: string;
  user_data: MetaUserData;
  custom_data?: { value?: number; currency?: string };
}

export interface MetaConversionsSettings {
  /** Graph API base, version included (META_GRAPH_URL). */
  graphUrl: string;
  timeoutMs: number;
  appSecret?: string;
}

const LABEL = 'Meta Graph';
const NUMERIC_ID = /^\d{1,30}$/;
const HASHED_SINGLE = ['fn', 'ln', 'zp', 'country'] as const;
const FUTURE_TOLERANCE_SECONDS = 5 * 60;

/** Why Meta would refuse this event (and with it the whole request), or undefined. */
export function validateMetaEvent(event: MetaServerEvent, now: number = Date.now()): string | undefined {
  if (event.event_id === '' || event.event_id.length > 255) return 'invalid_event_id';
  const nowSeconds = Math.floor(now / 1000);
  if (!Number.isSafeInteger(event.event_time)) return 'invalid_event_time';
  if (event.event_time < nowSeconds - META_EVENT_MAX_AGE_DAYS * 86_400) return 'event_time_too_old';
  if (event.event_time > nowSeconds + FUTURE_TOLERANCE_SECONDS) return 'event_time_in_future';
  const custom = event.custom_data;
  if (custom?.value !== undefined && !(Number.isFinite(custom.value) && custom.value >= 0)) return 'invalid_value';
  if (custom?.currency !== undefined && !/^[a-z]{3}$/.test(custom.currency)) return 'invalid_currency';
  const user = event.user_data;
  for (const list of [user.em, user.ph, user.external_id]) if (list?.some((hash) => !HEX_SHA256.test(hash))) return 'invalid_hash';
  for (const key of HASHED_SINGLE) if (user[key] !== undefined && !HEX_SHA256.test(user[key])) return 'invalid_hash';
  if (event.action_source === 'website' && (!user.client_user_agent || !event.event_source_url)) return 'website_event_incomplete';
  const keys = (user.em?.length ?? 0) + (user.ph?.length ?? 0) + (user.external_id?.length ?? 0);
  if (keys === 0 && !user.fbc && !user.fbp && !user.madid && !(user.client_ip_address && user.client_user_agent)) return 'no_match_key';
  return undefined;
}

export class MetaConversionsClient {
  constructor(private readonly settings: MetaConversionsSettings) {}

  static fromConfig(config: Pick<AppConfig, 'metaGraphUrl' | 'providerTimeoutMs' | 'adPlatforms'>): MetaConversionsClient {
    return new MetaConversionsClient({
      graphUrl: config.metaGraphUrl,
      timeoutMs: config.providerTimeoutMs,
      appSecret: config.adPlatforms.metaAds?.appSecret,
    });
  }

  /** Sends 1 to 1,000 events to the pixel; Meta answers how many it received. */
  async sendEvents(
    accessToken: string,
    target: { pixelId: string; testEventCode?: string | null },
    events: readonly MetaServerEvent[],
  ): Promise<DestinationOutcome<{ eventsReceived: number | null }>> {
    if (!NUMERIC_ID.test(target.pixelId))
      return failed({ kind: 'refused', reason: 'not_found', status: 0, platformCode: null, detail: 'The pixel id is not numeric.' });
    if (events.length === 0 || events.length > META_MAX_EVENTS_PER_REQUEST)
      return failed({
        kind: 'refused',
        reason: 'invalid_request',
        status: 0,
        platformCode: null,
        detail: `A request takes 1 to ${META_MAX_EVENTS_PER_REQUEST} events.`,
      });
    const url = new URL(`${this.settings.graphUrl}/${target.pixelId}/events`);
    url.search = new URLSearchParams({
      access_token: accessToken,
      ...(this.settings.appSecret && { appsecret_proof: appSecretProof(this.settings.appSecret, accessToken) }),
    }).toString();
    const body = JSON.stringify({ data: events, ...(target.testEventCode && { test_event_code: target.testEventCode }) });
    let answer: Awaited<ReturnType<typeof providerCall>>;
    try {
      answer = await providerCall(
        url,
        { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' }, body },
        this.settings.timeoutMs,
        LABEL,
      );
    } catch (error) {
      if (error instanceof ProviderUnreachableError) return failed(unreachable(error));
      throw error;
    }
    const error = objectOf(answer.body).error;
    if (answer.status >= 200 && answer.status < 300 && error === undefined && typeof answer.body === 'object' && answer.body !== null) {
      const received = objectOf(answer.body).events_received;
      return succeeded({ eventsReceived: typeof received === 'number' ? received : null });
    }
    return failed(classifyMetaFailure(answer.status, answer.body, answer.headers));
  }
}
