import { createHash } from 'node:crypto';
import { packUserData, unpackUserData } from './packed-user-data.js';

const hash = (text: string) => createHash('sha256').update(text).digest();

describe('packed user data', () => {
  it('packs tagged 32-byte hashes into 33-byte entries and reads them back as hex by kind, in order', () => {
    const packed = packUserData([
      ['email', hash('a@example.com')],
      ['phone', hash('15551234567')],
      ['email', hash('b@example.com')],
      ['zip', hash('10115')],
    ])!;
    expect(packed).toHaveLength(4 * 33);
    expect(unpackUserData(packed)).toEqual({
      email: [hash('a@example.com').toString('hex'), hash('b@example.com').toString('hex')],
      phone: [hash('15551234567').toString('hex')],
      firstName: [],
      lastName: [],
      country: [],
      zip: [hash('10115').toString('hex')],
    });
  });

  it('stores nothing for no identifiers, and refuses anything that is not a 32-byte hash', () => {
    expect(packUserData([])).toBeNull();
    expect(unpackUserData(null).email).toEqual([]);
    expect(() => packUserData([['email', Buffer.from('ada@example.com')]])).toThrow(/32-byte/);
  });

  it('skips an unknown tag and a torn tail instead of misreading them', () => {
    const packed = Buffer.concat([Buffer.from([99]), hash('x'), Buffer.from([1]), hash('y'), Buffer.from([2, 1, 2])]);
    expect(unpackUserData(packed)).toMatchObject({ email: [hash('y').toString('hex')], phone: [] });
  });
});
