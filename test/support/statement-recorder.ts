import type { Logger as TypeOrmLogger } from 'typeorm';

/** A TypeORM logger that keeps the SQL statements the application sends (`logging: ['query']`). */
export class StatementRecorder implements TypeOrmLogger {
  statements: string[] = [];
  logQuery(query: string) {
    this.statements.push(query);
  }
  logQueryError() {}
  logQuerySlow() {}
  logSchemaBuild() {}
  logMigration() {}
  log() {}
}
