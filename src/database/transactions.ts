import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

/**
 * Services open transactions here and hand the manager to repository methods; they never hold
 * the DataSource themselves (one door to the database: only repositories, this folder and the
 * CLI touch it, as the lint rules enforce).
 */
@Injectable()
export class Transactions {
  constructor(private readonly dataSource: DataSource) {}

  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }
}
