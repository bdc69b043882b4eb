import { Injectable, type OnModuleInit } from '@nestjs/common';
import { type ConnectionRemovalHandler, ConnectionRemovalHandlers } from '../connections/connection-removal.js';
import { SignalsRepository } from './signals.repository.js';
import { type Transaction } from '../common/tenancy/transactions.js';

/** SPEC sections 3 and 6: a deleted connection's signals lose it and the active ones pause; a connection whose grant is gone pauses them too. */
@Injectable()
export class SignalsConnectionRemoval implements ConnectionRemovalHandler, OnModuleInit {
  constructor(
    private readonly handlers: ConnectionRemovalHandlers,
    private readonly signals: SignalsRepository,
  ) {}

  onModuleInit(): void {
    this.handlers.register(this);
  }

  async connectionRemoved(connectionId: number, transaction: Transaction): Promise<void> {
    await this.signals.detachConnection(connectionId, transaction);
  }

  async connectionSuspended(connectionId: number, transaction: Transaction): Promise<void> {
    await this.signals.pauseForConnection(connectionId, transaction);
  }
}
