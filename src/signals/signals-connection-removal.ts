import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { type ConnectionRemovalHandler, ConnectionRemovalHandlers } from '../connections/connection-removal.js';
import { SignalsRepository } from './signals.repository.js';

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

  async connectionRemoved(connectionId: number, manager: EntityManager): Promise<void> {
    await this.signals.detachConnection(connectionId, manager);
  }

  async connectionSuspended(connectionId: number, manager: EntityManager): Promise<void> {
    await this.signals.pauseForConnection(connectionId, manager);
  }
}
