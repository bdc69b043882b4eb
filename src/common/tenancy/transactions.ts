import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

declare const TRANSACTION: unique symbol;

/**
 * A transaction as services hold it: a token to pass to repository methods, with no method of its
 * own. Services never get TypeORM's EntityManager, through which an unscoped `find` or `update`
 * would reach every workspace's rows; only repositories turn the token back into one
 * (`entityManagerOf`), and ESLint keeps `EntityManager` out of every other file.
 */
export interface Transaction {
  readonly [TRANSACTION]: true;
}

/**
 * Services open transactions here and hand the token to repository methods; they never hold
 * the DataSource themselves (one door to the database: only repositories, this folder and the
 * CLI touch it, as the lint rules enforce).
 */
@Injectable()
export class Transactions {
  constructor(private readonly dataSource: DataSource) {}

  run<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((manager) => work(manager as unknown as Transaction));
  }
}

/** The EntityManager behind a transaction token: for repository classes only. */
export function entityManagerOf(transaction: Transaction): EntityManager {
  return transaction as unknown as EntityManager;
}
