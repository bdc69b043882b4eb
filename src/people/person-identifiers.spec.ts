import { createHash } from 'node:crypto';
import { eachIdentifier, identifiersByKind, kindsOf, mergeIdentifiers, packIdentifiers } from './person-identifiers.js';

const hash = (text: string) => createHash('sha256').update(text).digest();

describe('packed identifiers', () => {
  it('packs each hash behind its kind byte, sorted by kind name and then hash, whatever the order given', () => {
    const [a, b] = [hash('a'), hash('b')].sort(Buffer.compare);
    const packed = packIdentifiers([
      { kind: 'zip', hash: a },
      { kind: 'email', hash: b },
      { kind: 'country', hash: a },
      { kind: 'email', hash: a },
    ]);
    expect(packed.length).toBe(4 * 33);
    // country (5), email (1), email (1), zip (6): the order `ORDER BY kind, hash` gave the sync.
    expect([0, 33, 66, 99].map((offset) => packed[offset])).toEqual([5, 1, 1, 6]);
    expect([...eachIdentifier(packed)]).toEqual([
      { kind: 'country', hash: a },
      { kind: 'email', hash: a },
      { kind: 'email', hash: b },
      { kind: 'zip', hash: a },
    ]);
    expect(packIdentifiers([...eachIdentifier(packed)].reverse())).toEqual(packed);
    expect(kindsOf(packed)).toEqual(new Set(['country', 'email', 'zip']));
    expect(identifiersByKind(packed).email).toEqual([a, b]);
  });

  it('replaces the named kinds and keeps the others', () => {
    const stored = packIdentifiers([
      { kind: 'email', hash: hash('old@example.com') },
      { kind: 'phone', hash: hash('+15550000000') },
    ]);
    const merged = mergeIdentifiers(stored, new Set(['email']), [{ kind: 'email', hash: hash('new@example.com') }]);
    expect([...eachIdentifier(merged)]).toEqual([
      { kind: 'email', hash: hash('new@example.com') },
      { kind: 'phone', hash: hash('+15550000000') },
    ]);
    // Naming a kind with no value removes the stored ones.
    expect([...eachIdentifier(mergeIdentifiers(stored, new Set(['phone']), []))].map(({ kind }) => kind)).toEqual(['email']);
    expect(mergeIdentifiers(Buffer.alloc(0), new Set(), [])).toEqual(Buffer.alloc(0));
  });
});
