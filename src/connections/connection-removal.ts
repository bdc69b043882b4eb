import { Injectable } from '@nestjs/common';
import { type Transaction } from '../common/tenancy/transactions.js';

/** Something that must change, in the same transaction, when a connection is deleted or loses its grant. */
export interface ConnectionRemovalHandler {
  connectionRemoved(connectionId: number, transaction: Transaction): Promise<void>;
  /** The connection turned `expired` or `revoked`: it stays, but nothing may use it until reconnected. */
  connectionSuspended(connectionId: number, transaction: Transaction): Promise<void>;
}

/**
 * Lets features that point at connections react to a deletion without connections knowing them:
 * the signals feature registers itself here (SPEC section 3: its signals are detached and
 * paused), so module imports run one way, signals → connections. Handlers run inside the
 * deleting transaction, in the current tenant context.
 */
@Injectable()
export class ConnectionRemovalHandlers {
  private readonly handlers: ConnectionRemovalHandler[] = [];

  register(handler: ConnectionRemovalHandler): void {
    this.handlers.push(handler);
  }

  async run(connectionId: number, transaction: Transaction): Promise<void> {
    for (const handler of this.handlers) await handler.connectionRemoved(connectionId, transaction);
  }

  async suspended(connectionId: number, transaction: Transaction): Promise<void> {
    for (const handler of this.handlers) await handler.connectionSuspended(connectionId, transaction);
  }
}
