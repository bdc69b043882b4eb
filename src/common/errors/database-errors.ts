/** PostgreSQL error classification, for turning constraint races into the documented 400/409. */
interface PgError {
  code?: string;
  constraint?: string;
  driverError?: { code?: string; constraint?: string };
}

function pg(error: unknown): { code?: string; constraint?: string } {
  const candidate = error as PgError | null;
  return candidate?.driverError ?? candidate ?? {};
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const { code, constraint: name } = pg(error);
  return code === '23505' && (constraint === undefined || name === constraint);
}

export function isForeignKeyViolation(error: unknown, constraint?: string): boolean {
  const { code, constraint: name } = pg(error);
  return code === '23503' && (constraint === undefined || name === constraint);
}

export function constraintOf(error: unknown): string | undefined {
  return pg(error).constraint;
}
