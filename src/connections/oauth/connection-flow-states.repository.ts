import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { ConnectionFlowState } from './connection-flow-state.entity.js';

export type NewFlowState = Omit<ConnectionFlowState, 'createdAt' | 'customer' | 'user'>;
export type PendingFlow = Omit<NewFlowState, 'stateHash'>;

/**
 * The connection flows in progress. Not a TenantRepository: the callback finds its row by the
 * state alone, before it knows a workspace, and the row then names the workspace to work in.
 */
@Injectable()
export class ConnectionFlowStatesRepository {
  constructor(@InjectRepository(ConnectionFlowState) private readonly states: Repository<ConnectionFlowState>) {}

  /** Stores a new flow and drops the expired ones. */
  async insert(state: NewFlowState, now: Date): Promise<void> {
    await this.states.manager.query(`DELETE FROM connection_flow_states WHERE expires_at <= $1`, [now]);
    await this.states.insert(state);
  }

  /** Removes and returns the flow: single use, even for two racing callbacks. */
  async take(stateHash: Buffer): Promise<PendingFlow | null> {
    // TypeORM answers a DELETE … RETURNING with [rows, count].
    const [rows]: [
      {
        platform: string;
        customer_id: number;
        user_id: number;
        code_verifier: string;
        redirect_uri: string;
        return_url: string;
        browser_hash: Buffer;
        expires_at: Date;
      }[],
      number,
    ] = await this.states.manager.query(
      `DELETE FROM connection_flow_states WHERE state_hash = $1
       RETURNING platform, customer_id, user_id, code_verifier, redirect_uri, return_url, browser_hash, expires_at`,
      [stateHash],
    );
    const row = rows[0];
    return row
      ? {
          platform: row.platform,
          customerId: row.customer_id,
          userId: row.user_id,
          codeVerifier: row.code_verifier,
          redirectUri: row.redirect_uri,
          returnUrl: row.return_url,
          browserHash: row.browser_hash,
          expiresAt: row.expires_at,
        }
      : null;
  }
}
