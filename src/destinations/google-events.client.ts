import { objectOf, providerCall, ProviderUnreachableError } from '../common/http/provider-call.js';
import type { AppConfig } from '../config/app-config.js';
import { type DestinationFailure, type DestinationOutcome, failed, HEX_SHA256, succeeded, unreachable } from './destination-types.js';
import { classifyGoogleFailure, type GoogleAccountRef } from './google-data-manager.client.js';

/**
 * Google's Data Manager API for conversions (SPEC 10.4): `POST v1/events:ingest` with the caller's
 * OAuth access token (scope `https://www.googleapis.com/auth/datamanager`).
 *
 * Implements, from the proto `google/ads/datamanager/v1/event.proto` in googleapis/googleapis
 * (Event: `transactionId`, `eventTimestamp` (RFC 3339), `userData.userIdentifiers[]`,
 * `adIdentifiers.gclid`, `currency`, `conversionValue`, `eventSource` WEB | APP | IN_STORE | PHONE |
 * OTHER, `eventDeviceInfo {userAgent, ipAddress}`) and the guides of
 * developers.google.com/data-manager/api/devguides/events (an `events.ingest` request names its
 * `destinations` — here one, the Google Ads account and, as `productDestinationId`, the conversion
 * action — carries the events and `encoding: HEX` for the hashed user data, and may be
 * `validateOnly` to test a payload without sending data). Limits (…/devguides/limits): at most
 * 2,000 events per request; quota 429 `RESOURCE_EXHAUSTED`. A request succeeds or fails whole
 * (DATAPLANE-FACTS), so events are validated before they are sent (validateGoogleEvent) and a
 * request Google refuses as invalid is split by the caller. Errors are google.rpc.Status,
 * classified as for audiences (classifyGoogleFailure); a BadRequest field violation on
 * `destinations…` (an unknown conversion action) refuses the destination itself: `not_found`.
 */

export const GOOGLE_MAX_EVENTS_PER_REQUEST = 2_000;
/** Google takes conversions up to 90 days old (SPEC 10.4). */
export const GOOGLE_EVENT_MAX_AGE_DAYS = 90;

export type GoogleEventSource = 'WEB' | 'APP' | 'IN_STORE' | 'PHONE' | 'OTHER';

export interface GoogleEventIdentifier {
  emailAddress?: string;
  phoneNumber?: string;
  address?: { givenName: string; familyName: string; regionCode: string; postalCode: string };
}

/** One event as `events:ingest` takes it. */
export interface GoogleEvent {
  transactionId: string;
  eventTimestamp: string;
  conversionValue?: number;
  currency?: string;
  eventSource?: GoogleEventSource;
  userData?: { userIdentifiers: GoogleEventIdentifier[] };
  adIdentifiers?: { gclid: string };
  eventDeviceInfo?: { userAgent?: string; ipAddress?: string };
}

export interface GoogleEventsTarget extends GoogleAccountRef {
  conversionActionId: string;
}

export interface GoogleEventsSettings {
  /** The API origin without version (GOOGLE_DATA_MANAGER_URL). */
  baseUrl: string;
  timeoutMs: number;
}

const LABEL = 'Google Data Manager';
const DIGITS = /^\d{1,20}$/;
const FUTURE_TOLERANCE_MS = 5 * 60_000;

/** Why Google would refuse this event (and with it the whole request), or undefined. */
export function validateGoogleEvent(event: GoogleEvent, now: number = Date.now()): string | undefined {
  if (event.transactionId === '' || event.transactionId.length > 255) return 'invalid_event_id';
  const at = Date.parse(event.eventTimestamp);
  if (Number.isNaN(at)) return 'invalid_event_time';
  if (at < now - GOOGLE_EVENT_MAX_AGE_DAYS * 86_400_000) return 'event_time_too_old';
  if (at > now + FUTURE_TOLERANCE_MS) return 'event_time_in_future';
  if (event.conversionValue !== undefined && !(Number.isFinite(event.conversionValue) && event.conversionValue >= 0))
    return 'invalid_value';
  if (event.currency !== undefined && !/^[A-Z]{3}$/.test(event.currency)) return 'invalid_currency';
  const identifiers = event.userData?.userIdentifiers ?? [];
  if (identifiers.length > 10) return 'too_many_identifiers';
  for (const identifier of identifiers) {
    if (identifier.emailAddress !== undefined && !HEX_SHA256.test(identifier.emailAddress)) return 'invalid_hash';
    if (identifier.phoneNumber !== undefined && !HEX_SHA256.test(identifier.phoneNumber)) return 'invalid_hash';
    const address = identifier.address;
    if (address && (!HEX_SHA256.test(address.givenName) || !HEX_SHA256.test(address.familyName))) return 'invalid_hash';
    if (address && !/^[A-Z]{2}$/.test(address.regionCode)) return 'invalid_field';
  }
  if (identifiers.length === 0 && !event.adIdentifiers?.gclid) return 'no_match_key';
  return undefined;
}

export class GoogleEventsClient {
  constructor(private readonly settings: GoogleEventsSettings) {}

  static fromConfig(config: Pick<AppConfig, 'googleDataManagerUrl' | 'providerTimeoutMs'>): GoogleEventsClient {
    return new GoogleEventsClient({ baseUrl: config.googleDataManagerUrl, timeoutMs: config.providerTimeoutMs });
  }

  /** Sends 1 to 2,000 events to the conversion action; Google's answer is a request id (its verdict comes later, as counts). */
  async ingestEvents(
    accessToken: string,
    target: GoogleEventsTarget,
    events: readonly GoogleEvent[],
    options: { validateOnly?: boolean } = {},
  ): Promise<DestinationOutcome<{ requestId: string }>> {
    if (!DIGITS.test(target.operatingAccountId)) return failed(localRefusal('The Google Ads account id is not numeric.', 'not_found'));
    if (target.loginAccountId && !DIGITS.test(target.loginAccountId))
      return failed(localRefusal('The manager account id is not numeric.', 'not_found'));
    if (!DIGITS.test(target.conversionActionId)) return failed(localRefusal('The conversion action id is not numeric.', 'not_found'));
    if (events.length === 0 || events.length > GOOGLE_MAX_EVENTS_PER_REQUEST)
      return failed(localRefusal(`A request takes 1 to ${GOOGLE_MAX_EVENTS_PER_REQUEST} events.`));
    const destination: Record<string, unknown> = {
      operatingAccount: { accountType: 'GOOGLE_ADS', accountId: target.operatingAccountId },
      productDestinationId: target.conversionActionId,
    };
    if (target.loginAccountId) destination.loginAccount = { accountType: 'GOOGLE_ADS', accountId: target.loginAccountId };
    const body = { destinations: [destination], events, encoding: 'HEX', validateOnly: options.validateOnly ?? false };
    let answer: Awaited<ReturnType<typeof providerCall>>;
    try {
      answer = await providerCall(
        new URL(`${this.settings.baseUrl}/v1/events:ingest`),
        {
          method: 'POST',
          headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'content-type': 'application/json' },
          body: JSON.stringify(body),
        },
        this.settings.timeoutMs,
        LABEL,
      );
    } catch (error) {
      if (error instanceof ProviderUnreachableError) return failed(unreachable(error));
      throw error;
    }
    if (answer.status >= 200 && answer.status < 300 && typeof answer.body === 'object' && answer.body !== null) {
      const requestId = objectOf(answer.body).requestId;
      return succeeded({ requestId: typeof requestId === 'string' ? requestId : '' });
    }
    const failure = classifyGoogleFailure(answer.status, answer.body, answer.headers);
    if (failure.kind === 'refused' && failure.reason === 'invalid_request' && refusesDestination(answer.body))
      return failed({ ...failure, reason: 'not_found' });
    return failed(failure);
  }
}

/** Whether a BadRequest names the request's destination (its account or conversion action) rather than an event. */
function refusesDestination(body: unknown): boolean {
  const details = objectOf(objectOf(body).error).details;
  for (const detail of Array.isArray(details) ? details.map(objectOf) : []) {
    const violations = detail.fieldViolations;
    for (const violation of Array.isArray(violations) ? violations.map(objectOf) : [])
      if (typeof violation.field === 'string' && violation.field.startsWith('destinations')) return true;
  }
  return false;
}

/** A request refused before it was sent: status 0. */
function localRefusal(detail: string, reason: 'invalid_request' | 'not_found' = 'invalid_request'): DestinationFailure {
  return { kind: 'refused', reason, status: 0, platformCode: null, detail };
}
