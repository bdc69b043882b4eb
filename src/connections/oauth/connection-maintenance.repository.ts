import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Connection, type Platform } from '../connection.entity.js';
import type { EncryptedToken } from '../token-cipher.js';
import { type Transaction, entityManagerOf } from '../../common/tenancy/transactions.js';

/** A connection the sweep has claimed: which workspace to enter, and which row. */
export interface DueConnection {
  customerId: number;
  id: number;
  platform: Platform;
}

export interface StoredTokenRow {
  customerId: number;
  id: number;
  accessToken: Buffer | null;
  refreshToken: Buffer | null;
}

/**
 * The only SQL on connections that spans workspaces, for work no request does: the token sweep
 * (claims one due connection at a time, then works on it inside that connection's workspace) and
 * the operator's `connection reencrypt`. Both name rows by (customer_id, id).
 */
@Injectable()
export class ConnectionMaintenanceRepository {
  constructor(@InjectRepository(Connection) private readonly connections: Repository<Connection>) {}

  /**
   * Locks one active connection that is due, skipping rows another instance holds: Meta tokens
   * that expire before `metaBefore`, Google grants not refreshed since `googleBefore`. `skip` are
   * `customer:id` keys already tried in this sweep.
   */
  async claimDue(transaction: Transaction, metaBefore: Date, googleBefore: Date, skip: string[]): Promise<DueConnection | null> {
    const rows: { customer_id: number; id: number; platform: Platform }[] = await entityManagerOf(transaction).query(
      `SELECT customer_id, id, platform FROM connections
        WHERE status = 'active'
          AND ((platform = 'meta_ads' AND token_expires_at < $1)
            OR (platform = 'google_ads' AND refresh_token_encrypted IS NOT NULL AND COALESCE(last_refreshed_at, created_at) < $2))
          AND NOT ((customer_id::text || ':' || id::text) = ANY($3::text[]))
        ORDER BY token_expires_at NULLS LAST
        LIMIT 1
        FOR UPDATE SKIP LOCKED`,
      [metaBefore, googleBefore, skip],
    );
    const row = rows[0];
    return row ? { customerId: row.customer_id, id: row.id, platform: row.platform } : null;
  }

  /** A page of connections holding tokens, in (customer_id, id) order after the cursor. */
  async withTokens(after: { customerId: number; id: number }, limit: number): Promise<StoredTokenRow[]> {
    const rows: { customer_id: number; id: number; access_token_encrypted: Buffer | null; refresh_token_encrypted: Buffer | null }[] =
      await this.connections.manager.query(
        `SELECT customer_id, id, access_token_encrypted, refresh_token_encrypted FROM connections
          WHERE (access_token_encrypted IS NOT NULL OR refresh_token_encrypted IS NOT NULL) AND (customer_id, id) > ($1, $2)
          ORDER BY customer_id, id LIMIT $3`,
        [after.customerId, after.id, limit],
      );
    return rows.map((row) => ({
      customerId: row.customer_id,
      id: row.id,
      accessToken: row.access_token_encrypted,
      refreshToken: row.refresh_token_encrypted,
    }));
  }

  /** Swaps one connection's ciphertexts, only if they are still the ones read (a refresh in between wins). */
  async replaceCiphertexts(
    row: StoredTokenRow,
    next: { accessToken: EncryptedToken | null; refreshToken: EncryptedToken | null },
  ): Promise<boolean> {
    const [, count]: [unknown, number] = await this.connections.manager.query(
      `UPDATE connections SET access_token_encrypted = $3, refresh_token_encrypted = $4
        WHERE customer_id = $1 AND id = $2
          AND access_token_encrypted IS NOT DISTINCT FROM $5 AND refresh_token_encrypted IS NOT DISTINCT FROM $6`,
      [row.customerId, row.id, next.accessToken, next.refreshToken, row.accessToken, row.refreshToken],
    );
    return count === 1;
  }
}
