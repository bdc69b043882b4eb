import { createHash } from 'node:crypto';
import type { GoogleEvent, GoogleEventIdentifier } from '../destinations/google-events.client.js';
import type { MetaServerEvent, MetaUserData } from '../destinations/meta-conversions.client.js';
import type { MetaSignalConfig } from '../signals/signal-config.js';
import { unpackUserData } from './packed-user-data.js';
import type { PendingSignalEvent } from './signal-events.repository.js';

/**
 * A stored event as each platform takes it (SPEC 10.4). Hashes come out of the packed columns as
 * they went in; nothing here sees or makes a raw identifier, except the advertiser's own
 * `external_id`, which Meta wants hashed like the rest (its customer information parameters).
 */

export function googleEventOf(event: PendingSignalEvent): GoogleEvent {
  const hashes = unpackUserData(event.googleUserData);
  const identifiers: GoogleEventIdentifier[] = [
    ...hashes.email.map((emailAddress) => ({ emailAddress })),
    ...hashes.phone.map((phoneNumber) => ({ phoneNumber })),
  ];
  const [givenName] = hashes.firstName;
  const [familyName] = hashes.lastName;
  // Google matches an address only as all four parts together (AddressInfo requires each).
  if (givenName && familyName && event.countryCode && event.postalCode)
    identifiers.push({ address: { givenName, familyName, regionCode: event.countryCode, postalCode: event.postalCode } });
  const google: GoogleEvent = { transactionId: event.eventId, eventTimestamp: new Date(event.eventTime).toISOString() };
  if (event.value !== null) google.conversionValue = event.value;
  if (event.currency !== null) google.currency = event.currency;
  if (event.eventSourceUrl !== null) google.eventSource = 'WEB';
  if (identifiers.length > 0) google.userData = { userIdentifiers: identifiers.slice(0, 10) };
  if (event.gclid !== null) google.adIdentifiers = { gclid: event.gclid };
  if (event.clientUserAgent !== null || event.clientIpAddress !== null)
    google.eventDeviceInfo = {
      ...(event.clientUserAgent !== null && { userAgent: event.clientUserAgent }),
      ...(event.clientIpAddress !== null && { ipAddress: event.clientIpAddress }),
    };
  return google;
}

export function metaEventOf(event: PendingSignalEvent, config: MetaSignalConfig): MetaServerEvent {
  const hashes = unpackUserData(event.metaUserData);
  const user: MetaUserData = {};
  if (hashes.email.length > 0) user.em = hashes.email;
  if (hashes.phone.length > 0) user.ph = hashes.phone;
  if (hashes.firstName[0]) user.fn = hashes.firstName[0];
  if (hashes.lastName[0]) user.ln = hashes.lastName[0];
  if (hashes.zip[0]) user.zp = hashes.zip[0];
  if (hashes.country[0]) user.country = hashes.country[0];
  if (event.externalId !== null) user.external_id = [createHash('sha256').update(event.externalId.trim(), 'utf8').digest('hex')];
  if (event.clientIpAddress !== null) user.client_ip_address = event.clientIpAddress;
  if (event.clientUserAgent !== null) user.client_user_agent = event.clientUserAgent;
  if (event.fbc !== null) user.fbc = event.fbc;
  if (event.fbp !== null) user.fbp = event.fbp;
  if (event.mobileAdId !== null) user.madid = event.mobileAdId;
  const meta: MetaServerEvent = {
    event_name: config.eventName,
    event_time: Math.floor(new Date(event.eventTime).getTime() / 1000),
    event_id: event.eventId,
    action_source: config.actionSource,
    user_data: user,
  };
  if (event.eventSourceUrl !== null) meta.event_source_url = event.eventSourceUrl;
  if (event.value !== null || event.currency !== null)
    meta.custom_data = {
      ...(event.value !== null && { value: event.value }),
      ...(event.currency !== null && { currency: event.currency.toLowerCase() }),
    };
  return meta;
}
