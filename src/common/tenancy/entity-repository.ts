import type { EntityManager, ObjectLiteral, Repository } from 'typeorm';
import { entityManagerOf, type Transaction } from './transactions.js';

/**
 * The base of every repository class: the TypeORM repository that `TypeOrmModule.forFeature`
 * injects, and the manager to run a statement on — the transaction's, when a service passes the
 * token `Transactions.run` gave it, else the repository's own.
 */
export abstract class EntityRepository<E extends ObjectLiteral> {
  protected constructor(protected readonly repository: Repository<E>) {}

  protected managerOf(transaction: Transaction | undefined): EntityManager {
    return transaction === undefined ? this.repository.manager : entityManagerOf(transaction);
  }
}
