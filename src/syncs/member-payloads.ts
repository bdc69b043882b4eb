import type { MemberConsent } from '../destinations/destination-types.js';
import type { GoogleMemberInput } from '../destinations/google-audience-members.js';
import type { MetaMemberInput } from '../destinations/meta-audience-rows.js';
import type { ConsentValue } from '../people/person.entity.js';
import { identifiersByKind } from '../people/person-identifiers.js';
import type { MemberState } from './sync-members.repository.js';

/** Hashes of `before` that `after` no longer has, per kind (an email or phone the person dropped). */
export function vanishedIdentifiers(before: Buffer, after: Buffer): { email: Buffer[]; phone: Buffer[] } {
  const old = identifiersByKind(before);
  const current = identifiersByKind(after);
  const gone = (kind: 'email' | 'phone') => {
    const kept = new Set(current[kind].map((hash) => hash.toString('hex')));
    return old[kind].filter((hash) => !kept.has(hash.toString('hex')));
  };
  return { email: gone('email'), phone: gone('phone') };
}

const CONSENT_LETTERS: Record<string, ConsentValue> = { g: 'granted', d: 'denied', u: 'unspecified' };

export function consentOf(letters: string): MemberConsent {
  return {
    adUserData: CONSENT_LETTERS[letters[0] ?? 'u'] ?? 'unspecified',
    adPersonalization: CONSENT_LETTERS[letters[1] ?? 'u'] ?? 'unspecified',
  };
}

/** A person as the Google builder takes them: Google-form hashes, and the address when all four parts are there. */
export function googleInput(state: MemberState, identifiers = identifiersByKind(state.identifiers)): GoogleMemberInput<number> {
  const givenName = identifiers.first_name[0];
  const familyName = identifiers.last_name[0];
  const address =
    givenName && familyName && state.regionCode && state.postalCode
      ? { givenName, familyName, regionCode: state.regionCode, postalCode: state.postalCode }
      : null;
  return { key: state.personId, emails: identifiers.email, phones: identifiers.phone, address, consent: consentOf(state.consent) };
}

/** A person as the Meta row builder takes them: Meta-form hashes and the mobile ad id (never the advertiser's own id). */
export function metaInput(state: MemberState, identifiers = identifiersByKind(state.identifiers)): MetaMemberInput<number> {
  return {
    key: state.personId,
    emails: identifiers.email,
    phones: identifiers.phone,
    firstName: identifiers.first_name[0] ?? null,
    lastName: identifiers.last_name[0] ?? null,
    country: identifiers.country[0] ?? null,
    zip: identifiers.zip[0] ?? null,
    mobileAdId: state.mobileAdId,
  };
}
