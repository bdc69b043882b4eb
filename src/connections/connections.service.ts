import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import type { Identity } from '../common/access/identity.js';
import { ApiError } from '../common/errors/api-error.js';
import { LOGGER } from '../logging/logger.token.js';
import { pageOf, type Page } from '../common/pagination/pagination.js';
import type { Connection } from './connection.entity.js';
import { toConnectionDto } from './connection.mapper.js';
import { ConnectionRemovalHandlers } from './connection-removal.js';
import { ConnectionsRepository } from './connections.repository.js';
import type { ListConnectionsQuery } from './dto/list-connections.query.js';
import type { ConnectionDto, UpdateConnectionDto } from './dto/connection.dto.js';
import { ProviderRevoker } from './provider-revoker.js';
import { Transactions } from '../common/tenancy/transactions.js';

/** The rules of SPEC section 3 for connections, shared by the REST controller and the MCP tools. */
@Injectable()
export class ConnectionsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly connections: ConnectionsRepository,
    private readonly removalHandlers: ConnectionRemovalHandlers,
    private readonly revoker: ProviderRevoker,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async list(query: ListConnectionsQuery, url: URL): Promise<Page<ConnectionDto>> {
    return pageOf(await this.connections.list(query, query.page), query.page, url, toConnectionDto);
  }

  async get(id: number): Promise<ConnectionDto> {
    return toConnectionDto(await this.connections.getById(id));
  }

  /**
   * The display name, and on Google connections the Customer Match terms flag (SPEC 10.3). A PATCH
   * that changes nothing leaves updated_at alone, and a value sent back unchanged is never refused,
   * so a client may PATCH what it read.
   */
  async update(id: number, input: UpdateConnectionDto, identity: Identity): Promise<ConnectionDto> {
    return this.transactions.run(async (transaction) => {
      const connection = await this.connections.getById(id, { transaction, lock: true });
      const name = input.account_name !== undefined && input.account_name !== connection.accountName ? input.account_name : undefined;
      const terms = this.termsChange(connection, input.customer_match_terms_accepted, identity);
      if (name === undefined && terms === undefined) return toConnectionDto(connection);
      if (name !== undefined) connection.accountName = name;
      if (terms !== undefined) connection.customerMatchTermsAccepted = terms;
      const saved = await this.connections.save(connection, transaction);
      if (terms !== undefined)
        // Who declared a legal acceptance, and when, belongs in the operator's record.
        this.logger.info(
          {
            customer: saved.customerId,
            connection_id: saved.id,
            user_id: identity.kind === 'api_key' ? null : identity.userId,
            accepted: terms,
          },
          'customer match terms changed',
        );
      return toConnectionDto(saved);
    });
  }

  /**
   * The new value of the terms flag, or undefined when it does not change. Accepting Google's terms
   * binds the organisation, so only an admin may change it (SPEC 10.3): an editor, or an API key,
   * which is no person, gets 403. Meta has no such terms: `true` there is a 400.
   */
  private termsChange(connection: Connection, wanted: boolean | undefined, identity: Identity): boolean | undefined {
    if (wanted === undefined || wanted === connection.customerMatchTermsAccepted) return undefined;
    if (connection.platform !== 'google_ads')
      throw ApiError.field('customer_match_terms_accepted', "Customer Match terms are Google's; a Meta connection has none to accept.");
    if (identity.kind === 'api_key' || identity.role !== 'admin')
      throw ApiError.permissionDenied(
        identity.kind === 'api_key'
          ? "Only an admin can change a connection's Customer Match terms; an API key cannot."
          : "Only an admin can change a connection's Customer Match terms.",
      );
    return wanted;
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
    await this.transactions.run(async (transaction) => {
      await this.connections.getById(id, { transaction, lock: true });
      await this.removalHandlers.run(id, transaction);
      await this.connections.delete(id, transaction);
    });
  }
}
