/**
 * An event's hashed identifiers for one platform, as one `bytea`: entries of 33 bytes, a tag byte
 * and the 32 bytes of one SHA-256. One column per platform instead of a row per identifier keeps
 * an accepted batch one INSERT of one row per event (unnest of flat arrays), and nothing in it is
 * a raw value: each hash was computed by src/people/normalization before the row was built.
 */

export const UserDataTag = { email: 1, phone: 2, firstName: 3, lastName: 4, country: 5, zip: 6 } as const;
export type UserDataTagName = keyof typeof UserDataTag;

const ENTRY = 33;
const HASH = 32;
const NAMES = Object.fromEntries(Object.entries(UserDataTag).map(([name, tag]) => [tag, name])) as Record<number, UserDataTagName>;

/** The hashes packed, in the order given; null when there are none. Every hash must be 32 bytes. */
export function packUserData(entries: readonly [UserDataTagName, Buffer][]): Buffer | null {
  if (entries.length === 0) return null;
  const packed = Buffer.alloc(entries.length * ENTRY);
  entries.forEach(([name, hash], index) => {
    if (hash.length !== HASH) throw new Error('A packed identifier is a 32-byte SHA-256.');
    packed[index * ENTRY] = UserDataTag[name];
    hash.copy(packed, index * ENTRY + 1);
  });
  return packed;
}

/** The hashes of a packed column by kind, as lowercase hex, in their stored order. Unknown tags and a torn tail are skipped. */
export function unpackUserData(packed: Buffer | null): Record<UserDataTagName, string[]> {
  const result: Record<UserDataTagName, string[]> = { email: [], phone: [], firstName: [], lastName: [], country: [], zip: [] };
  if (packed === null) return result;
  for (let offset = 0; offset + ENTRY <= packed.length; offset += ENTRY) {
    const name = NAMES[packed[offset]!];
    if (name !== undefined) result[name].push(packed.subarray(offset + 1, offset + ENTRY).toString('hex'));
  }
  return result;
}
