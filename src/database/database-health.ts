import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** Whether PostgreSQL answers, for /readyz; lives here so that controllers never hold the DataSource. */
@Injectable()
export class DatabaseHealth {
  constructor(private readonly dataSource: DataSource) {}

  /** Rejects when no connection can be had or the server does not answer. */
  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }
}
