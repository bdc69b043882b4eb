import type { DataSource } from 'typeorm';

export interface StoredIdentifier {
  platform: 'google' | 'meta';
  kind: string;
  hash: string;
}

/**
 * The hashes stored on the people a condition on `p` (people) selects, one row per hash as
 * (platform, kind, hex), sorted: the packed columns (src/people/person-identifiers.ts) read with
 * the database's own `person_identifier_kind`.
 */
export function storedIdentifiers(dataSource: DataSource, condition: string, parameters: unknown[] = []): Promise<StoredIdentifier[]> {
  return dataSource.query(
    `SELECT x.platform, person_identifier_kind(get_byte(x.packed, n * 33)) AS kind, encode(substring(x.packed FROM n * 33 + 2 FOR 32), 'hex') AS hash
     FROM people p
     CROSS JOIN LATERAL (VALUES ('google', p.google_identifiers), ('meta', p.meta_identifiers)) AS x(platform, packed)
     CROSS JOIN LATERAL generate_series(0, length(x.packed) / 33 - 1) AS n
     WHERE ${condition}
     ORDER BY 1, 2, 3`,
    parameters,
  );
}
