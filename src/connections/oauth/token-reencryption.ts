import type { TokenCipher } from '../token-cipher.js';
import type { ConnectionMaintenanceRepository } from './connection-maintenance.repository.js';

/** Rows read per round. */
const BATCH = 200;

export interface ReencryptionReport {
  /** Connections whose tokens now use the current key. */
  reencrypted: number;
  /** Already on the current key. */
  current: number;
  /** Encrypted under a key that is not configured (or corrupt): left as they are, by connection. */
  undecryptable: { customer: number; id: number }[];
}

/**
 * `audience-admin connection reencrypt` (key rotation, SPEC section 6): every stored token not
 * under the current ENCRYPTION_KEY is decrypted (with ENCRYPTION_PREVIOUS_KEYS) and encrypted
 * again under it, connection by connection; a row that changed meanwhile (a refresh wrote new
 * tokens, already under the current key) is left alone. Once it reports nothing undecryptable,
 * the previous keys can be removed from the configuration.
 */
export async function reencryptTokens(maintenance: ConnectionMaintenanceRepository, cipher: TokenCipher): Promise<ReencryptionReport> {
  const report: ReencryptionReport = { reencrypted: 0, current: 0, undecryptable: [] };
  let after = { customerId: 0, id: 0 };
  for (;;) {
    const rows = await maintenance.withTokens(after, BATCH);
    if (rows.length === 0) break;
    after = rows[rows.length - 1]!;
    for (const row of rows) {
      const tokens = [row.accessToken, row.refreshToken];
      if (tokens.every((token) => token === null || cipher.isCurrent(token))) {
        report.current++;
        continue;
      }
      let next;
      try {
        next = {
          accessToken: row.accessToken && cipher.encrypt(cipher.decrypt(row.accessToken)),
          refreshToken: row.refreshToken && cipher.encrypt(cipher.decrypt(row.refreshToken)),
        };
      } catch {
        report.undecryptable.push({ customer: row.customerId, id: row.id });
        continue;
      }
      if (await maintenance.replaceCiphertexts(row, next)) report.reencrypted++;
      else report.current++;
    }
  }
  return report;
}
