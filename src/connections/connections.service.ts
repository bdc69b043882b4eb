import { Injectable } from '@nestjs/common';
import { pageOf, type Page, type PageRequest } from '../common/pagination/pagination.js';
import { toConnectionDto } from './connection.mapper.js';
import { ConnectionRemovalHandlers } from './connection-removal.js';
import { type ConnectionFilters, ConnectionsRepository } from './connections.repository.js';
import type { ConnectionDto, UpdateConnectionDto } from './dto/connection.dto.js';
import { ProviderRevoker } from './provider-revoker.js';
import { Transactions } from '../database/transactions.js';

/** The rules of SPEC section 3 for connections, shared by the REST controller and the MCP tools. */
@Injectable()
export class ConnectionsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly connections: ConnectionsRepository,
    private readonly removalHandlers: ConnectionRemovalHandlers,
    private readonly revoker: ProviderRevoker,
  ) {}

  async list(filters: ConnectionFilters, request: PageRequest, url: URL): Promise<Page<ConnectionDto>> {
    return pageOf(await this.connections.list(filters, request), request, url, toConnectionDto);
  }

  async get(id: number): Promise<ConnectionDto> {
    return toConnectionDto(await this.connections.getById(id));
  }

  /** Only the display name is the client's; a PATCH that changes nothing leaves updated_at alone. */
  async update(id: number, input: UpdateConnectionDto): Promise<ConnectionDto> {
    return this.transactions.run(async (manager) => {
      const connection = await this.connections.getById(id, { manager, lock: true });
      if (input.account_name === undefined || input.account_name === connection.accountName) return toConnectionDto(connection);
      connection.accountName = input.account_name;
      return toConnectionDto(await this.connections.save(connection, manager));
    });
  }

  /**
   * Revokes the grant at the provider first, best effort (SPEC section 3: a provider that fails or
   * hangs must not keep a connection the user wants gone), outside any transaction so no row lock
   * is held during the call. Then, atomically: the connection's row is locked, which makes a
   * concurrent signal insert referencing it wait and then fail its foreign key, signals using it
   * are detached and paused, and it is deleted (audience links cascade).
   */
  async delete(id: number): Promise<void> {
    const connection = await this.connections.getById(id);
    const tokens = await this.connections.storedTokens(id);
    if (tokens) await this.revoker.revoke(connection, tokens);
    await this.transactions.run(async (manager) => {
      await this.connections.getById(id, { manager, lock: true });
      await this.removalHandlers.run(id, manager);
      await this.connections.delete(id, manager);
    });
  }
}
