import { hexOf, type IdentifierHash, type MemberConsent, type MemberRejection, type RejectedMember, slices } from './destination-types.js';

/**
 * Builds Data Manager API `AudienceMember`s from the hashes a person has for Google (SPEC 10.1,
 * 10.3) and validates every one of them before anything is sent, because the API takes or refuses
 * a request whole. Shapes and limits: the v1 discovery document as generated in
 * googleapis/google-api-nodejs-client `src/apis/datamanager/v1.ts` (AudienceMember, UserData,
 * UserIdentifier, AddressInfo, Consent), googleapis/googleapis
 * `google/ads/datamanager/v1/consent.proto`, and developers.google.com/data-manager/api/devguides/limits
 * (10,000 members per request, 10 identifiers per member).
 */

export const GOOGLE_MAX_MEMBERS_PER_REQUEST = 10_000;
export const GOOGLE_MAX_IDENTIFIERS_PER_MEMBER = 10;

/** Longest postal code taken; the API documents none, the longest national formats are about 10. */
const MAX_POSTAL_CODE = 32;

export type GoogleConsentStatus = 'CONSENT_GRANTED' | 'CONSENT_DENIED' | 'CONSENT_STATUS_UNSPECIFIED';

export interface GoogleUserIdentifier {
  emailAddress?: string;
  phoneNumber?: string;
  address?: { givenName: string; familyName: string; regionCode: string; postalCode: string };
}

export interface GoogleAudienceMember {
  userData: { userIdentifiers: GoogleUserIdentifier[] };
  consent?: { adUserData: GoogleConsentStatus; adPersonalization: GoogleConsentStatus };
}

/**
 * One person as the sync reads it for Google: the Google-form hashes (email with the Gmail rule,
 * phone in E.164 with `+`, names lowercased) and the address's clear region and postal code.
 */
export interface GoogleMemberInput<Key> {
  /** The caller's key for the person (its id), given back with each batch so accepted members can be recorded. */
  key: Key;
  emails: readonly IdentifierHash[];
  phones: readonly IdentifierHash[];
  /** All four parts or none: Google matches an address only as a whole. */
  address?: { givenName: IdentifierHash; familyName: IdentifierHash; regionCode: string; postalCode: string } | null;
  consent: MemberConsent;
}

/** Members that go in one request, with the caller's keys in the same order. */
export interface GoogleMemberBatch<Key> {
  keys: Key[];
  members: GoogleAudienceMember[];
}

export type GoogleOperation = 'ingest' | 'remove';

const CONSENT: Record<MemberConsent['adUserData'], GoogleConsentStatus> = {
  granted: 'CONSENT_GRANTED',
  denied: 'CONSENT_DENIED',
  unspecified: 'CONSENT_STATUS_UNSPECIFIED',
};

/**
 * One `AudienceMember`, or why the person cannot be one. Identifiers are deduplicated and at most
 * 10 are kept, in the order first email, first phone, address, then the other emails and phones
 * (a person has up to 5 of each: SPEC 10.1), so every kind of key gets a chance to match.
 * An ingest carries the person's consent (SPEC 10.3: per member, `unspecified` as
 * `CONSENT_STATUS_UNSPECIFIED`) and never a person who denied either consent; a removal carries none.
 */
export function buildGoogleMember<Key>(
  input: GoogleMemberInput<Key>,
  operation: GoogleOperation,
): { member: GoogleAudienceMember; omitted: number } | { rejection: MemberRejection } {
  if (operation === 'ingest' && (input.consent.adUserData === 'denied' || input.consent.adPersonalization === 'denied'))
    return { rejection: 'consent_denied' };
  const emails = hexList(input.emails);
  const phones = hexList(input.phones);
  if (emails === undefined || phones === undefined) return { rejection: 'invalid_hash' };

  let address: GoogleUserIdentifier['address'];
  if (input.address) {
    const givenName = hexOf(input.address.givenName);
    const familyName = hexOf(input.address.familyName);
    if (givenName === undefined || familyName === undefined) return { rejection: 'invalid_hash' };
    const regionCode = input.address.regionCode.trim().toUpperCase();
    const postalCode = input.address.postalCode.trim();
    if (!/^[A-Z]{2}$/.test(regionCode) || postalCode === '' || postalCode.length > MAX_POSTAL_CODE) return { rejection: 'invalid_field' };
    address = { givenName, familyName, regionCode, postalCode };
  }

  const ordered: GoogleUserIdentifier[] = [];
  if (emails[0] !== undefined) ordered.push({ emailAddress: emails[0] });
  if (phones[0] !== undefined) ordered.push({ phoneNumber: phones[0] });
  if (address !== undefined) ordered.push({ address });
  for (const email of emails.slice(1)) ordered.push({ emailAddress: email });
  for (const phone of phones.slice(1)) ordered.push({ phoneNumber: phone });
  if (ordered.length === 0) return { rejection: 'unmatchable' };

  const member: GoogleAudienceMember = { userData: { userIdentifiers: ordered.slice(0, GOOGLE_MAX_IDENTIFIERS_PER_MEMBER) } };
  if (operation === 'ingest')
    member.consent = { adUserData: CONSENT[input.consent.adUserData], adPersonalization: CONSENT[input.consent.adPersonalization] };
  return { member, omitted: Math.max(0, ordered.length - GOOGLE_MAX_IDENTIFIERS_PER_MEMBER) };
}

/** Distinct lowercase hex hashes in their given order, or undefined when one is not a SHA-256. */
function hexList(hashes: readonly IdentifierHash[]): string[] | undefined {
  const seen = new Set<string>();
  for (const hash of hashes) {
    const hex = hexOf(hash);
    if (hex === undefined) return undefined;
    seen.add(hex);
  }
  return [...seen];
}

/**
 * Every person built and checked, then cut into requests of at most 10,000 members. Rejected people
 * are named with their reason and appear in no batch; `omittedIdentifiers` counts identifiers left
 * out past the tenth of a member.
 */
export function prepareGoogleMembers<Key>(
  inputs: readonly GoogleMemberInput<Key>[],
  operation: GoogleOperation,
): { batches: GoogleMemberBatch<Key>[]; rejected: RejectedMember<Key>[]; omittedIdentifiers: number } {
  const accepted: { key: Key; member: GoogleAudienceMember }[] = [];
  const rejected: RejectedMember<Key>[] = [];
  let omittedIdentifiers = 0;
  for (const input of inputs) {
    const built = buildGoogleMember(input, operation);
    if ('rejection' in built) rejected.push({ key: input.key, reason: built.rejection });
    else {
      accepted.push({ key: input.key, member: built.member });
      omittedIdentifiers += built.omitted;
    }
  }
  const batches = slices(accepted, GOOGLE_MAX_MEMBERS_PER_REQUEST).map((slice) => ({
    keys: slice.map((entry) => entry.key),
    members: slice.map((entry) => entry.member),
  }));
  return { batches, rejected, omittedIdentifiers };
}

/**
 * Why a batch may not be sent as it is (a batch built by hand, not by prepareGoogleMembers), or
 * undefined when it may: the checks the API would otherwise fail the whole request on.
 */
export function googleBatchProblem(batch: GoogleMemberBatch<unknown>): string | undefined {
  if (batch.members.length === 0) return 'The batch has no members.';
  if (batch.members.length > GOOGLE_MAX_MEMBERS_PER_REQUEST) return `A request takes at most ${GOOGLE_MAX_MEMBERS_PER_REQUEST} members.`;
  if (batch.keys.length !== batch.members.length) return 'The batch has a key per member.';
  for (const member of batch.members) {
    const identifiers = member.userData.userIdentifiers;
    if (identifiers.length === 0 || identifiers.length > GOOGLE_MAX_IDENTIFIERS_PER_MEMBER)
      return `A member has 1 to ${GOOGLE_MAX_IDENTIFIERS_PER_MEMBER} identifiers.`;
    for (const identifier of identifiers) {
      const hashes = [identifier.emailAddress, identifier.phoneNumber, identifier.address?.givenName, identifier.address?.familyName];
      if (hashes.some((hash) => hash !== undefined && hexOf(hash) === undefined)) return 'Every hash is 64 lowercase hex digits.';
    }
  }
  return undefined;
}
