import { type GoogleIdentifiers } from './identifier-normalization.js';

/** 16 bytes, 32 hex characters: collisions among one workspace's people are out of reach. */
export const DERIVED_ID_BYTES = 16;

/**
 * SPEC 10.1 `external_id` for a write that has none: `email:` and the first 32 hex characters of
 * the first Google email hash, else `phone:` and likewise of the first Google phone hash, else
 * undefined (the row is then rejected). Google's forms are the stable choice: the two spellings of
 * one Gmail address, and a national and an international spelling of one phone, give one id.
 */
export function deriveExternalId(google: Pick<GoogleIdentifiers, 'emails' | 'phones'>): string | undefined {
  const email = google.emails[0];
  if (email !== undefined) return `email:${email.toString('hex', 0, DERIVED_ID_BYTES)}`;
  const phone = google.phones[0];
  if (phone !== undefined) return `phone:${phone.toString('hex', 0, DERIVED_ID_BYTES)}`;
  return undefined;
}
