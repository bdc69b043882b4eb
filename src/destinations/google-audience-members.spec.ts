import { createHash } from 'node:crypto';
import { buildGoogleMember, googleBatchProblem, type GoogleMemberInput, prepareGoogleMembers } from './google-audience-members.js';

const sha = (text: string) => createHash('sha256').update(text).digest();
const hex = (text: string) => sha(text).toString('hex');
const granted = { adUserData: 'granted', adPersonalization: 'granted' } as const;

function person(overrides: Partial<GoogleMemberInput<number>> = {}): GoogleMemberInput<number> {
  return { key: 1, emails: [sha('ada@example.com')], phones: [], consent: granted, ...overrides };
}

describe('buildGoogleMember', () => {
  it('sends each hash as lowercase hex, the address in clear, and the consent per member in the API enum', () => {
    const built = buildGoogleMember(
      person({
        emails: [sha('ada@example.com')],
        phones: [hex('+447700900123')],
        address: { givenName: sha('ada'), familyName: sha('lovelace'), regionCode: 'gb', postalCode: ' SW1A 1AA ' },
        consent: { adUserData: 'granted', adPersonalization: 'unspecified' },
      }),
      'ingest',
    );
    expect(built).toEqual({
      omitted: 0,
      member: {
        userData: {
          userIdentifiers: [
            { emailAddress: hex('ada@example.com') },
            { phoneNumber: hex('+447700900123') },
            { address: { givenName: hex('ada'), familyName: hex('lovelace'), regionCode: 'GB', postalCode: 'SW1A 1AA' } },
          ],
        },
        consent: { adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_STATUS_UNSPECIFIED' },
      },
    });
  });

  it('keeps at most 10 distinct identifiers: first email, first phone, address, then the others', () => {
    const emails = [0, 1, 2, 3, 4, 0].map((n) => sha(`person${n}@example.com`));
    const phones = [0, 1, 2, 3, 4].map((n) => sha(`+4477009001${n}0`));
    const built = buildGoogleMember(
      person({ emails, phones, address: { givenName: sha('a'), familyName: sha('b'), regionCode: 'GB', postalCode: 'N1' } }),
      'ingest',
    );
    if (!('member' in built)) throw new Error('rejected');
    const identifiers = built.member.userData.userIdentifiers;
    expect(identifiers).toHaveLength(10);
    expect(built.omitted).toBe(1);
    expect(identifiers.slice(0, 3).map((identifier) => Object.keys(identifier)[0])).toEqual(['emailAddress', 'phoneNumber', 'address']);
    expect(new Set(identifiers.map((identifier) => JSON.stringify(identifier))).size).toBe(10);
  });

  it('never ingests a person who denied a consent, and removes one without any consent', () => {
    const denied = person({ consent: { adUserData: 'granted', adPersonalization: 'denied' } });
    expect(buildGoogleMember(denied, 'ingest')).toEqual({ rejection: 'consent_denied' });
    const removal = buildGoogleMember(denied, 'remove');
    expect(removal).toEqual({ omitted: 0, member: { userData: { userIdentifiers: [{ emailAddress: hex('ada@example.com') }] } } });
  });

  it('rejects a raw or wrongly encoded value, an address out of shape, and a person with no identifier', () => {
    expect(buildGoogleMember(person({ emails: ['ada@example.com'] }), 'ingest')).toEqual({ rejection: 'invalid_hash' });
    expect(buildGoogleMember(person({ emails: [hex('a').toUpperCase()] }), 'ingest')).toEqual({ rejection: 'invalid_hash' });
    expect(buildGoogleMember(person({ emails: [Buffer.alloc(16)] }), 'ingest')).toEqual({ rejection: 'invalid_hash' });
    const badRegion = { givenName: sha('a'), familyName: sha('b'), regionCode: 'GBR', postalCode: 'N1' };
    expect(buildGoogleMember(person({ address: badRegion }), 'ingest')).toEqual({ rejection: 'invalid_field' });
    expect(buildGoogleMember(person({ emails: [], phones: [] }), 'ingest')).toEqual({ rejection: 'unmatchable' });
  });
});

describe('prepareGoogleMembers', () => {
  it('cuts 25,000 members into requests of 10,000, 10,000 and 5,000, with keys in member order', () => {
    const inputs = Array.from({ length: 25_000 }, (_, index) => person({ key: index, emails: [sha(`p${index}@example.com`)] }));
    const { batches, rejected } = prepareGoogleMembers(inputs, 'ingest');
    expect(rejected).toEqual([]);
    expect(batches.map((batch) => batch.members.length)).toEqual([10_000, 10_000, 5_000]);
    expect(batches[2]!.keys[0]).toBe(20_000);
    expect(batches[2]!.members[0]!.userData.userIdentifiers[0]).toEqual({ emailAddress: hex('p20000@example.com') });
    expect(batches.every((batch) => googleBatchProblem(batch) === undefined)).toBe(true);
  });

  it('names every rejected member with its reason and leaves it out of the batches', () => {
    const { batches, rejected } = prepareGoogleMembers(
      [
        person({ key: 1 }),
        person({ key: 2, emails: ['not a hash'] }),
        person({ key: 3, consent: { adUserData: 'denied', adPersonalization: 'granted' } }),
      ],
      'ingest',
    );
    expect(rejected).toEqual([
      { key: 2, reason: 'invalid_hash' },
      { key: 3, reason: 'consent_denied' },
    ]);
    expect(batches).toHaveLength(1);
    expect(batches[0]!.keys).toEqual([1]);
  });

  it('finds a hand-built batch the API would refuse', () => {
    const member = { userData: { userIdentifiers: Array.from({ length: 11 }, (_, n) => ({ emailAddress: hex(String(n)) })) } };
    expect(googleBatchProblem({ keys: [1], members: [member] })).toMatch(/1 to 10 identifiers/);
    expect(googleBatchProblem({ keys: [1], members: [{ userData: { userIdentifiers: [{ emailAddress: 'ada@example.com' }] } }] })).toMatch(
      /64 lowercase hex/,
    );
    expect(googleBatchProblem({ keys: [], members: [] })).toMatch(/no members/);
  });
});
