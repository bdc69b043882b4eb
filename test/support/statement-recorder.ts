import type { Logger as TypeOrmLogger } from 'typeorm';

/** A TypeORM logger that keeps the SQL statements the application sends (`logging: ['query']`), and their parameters. */
export class StatementRecorder implements TypeOrmLogger {
  statements: string[] = [];
  parameters: unknown[][] = [];
  logQuery(query: string, parameters?: unknown[]) {
    this.statements.push(query);
    this.parameters.push(parameters ?? []);
  }
  logQueryError() {}
  logQuerySlow() {}
  logSchemaBuild() {}
  logMigration() {}
  log() {}
}
