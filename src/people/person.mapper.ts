import type { PersonDto } from './dto/person.dto.js';
import type { Person } from './person.entity.js';

/** Field by field, so a new column (a country code, a mobile ad id) never reaches a response by accident. */
export function toPersonDto(person: Person, audienceIds: number[]): PersonDto {
  return {
    id: person.id,
    customer: person.customerId,
    external_id: person.externalId,
    matched_keys: person.matchedKeys,
    traits: person.traits,
    consent: { ad_user_data: person.consentAdUserData, ad_personalization: person.consentAdPersonalization },
    audiences: audienceIds.map(Number),
    created_at: person.createdAt.toISOString(),
    updated_at: person.updatedAt.toISOString(),
  };
}
