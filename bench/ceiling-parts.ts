import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The parts of the ceiling's work (bench/ceiling.ts) that the floor (bench/floor.ts) does too, so
 * that both check credentials and count requests alike: the statements the service sends for
 * credentials (captured from it), the credential rows and their checks, and the request counter.
 * What both answer is in bench/read-answers.ts.
 */

export const SESSION_SQL = `SELECT s.user_id, s.customer_id, u.role, u.is_active, s.revoked_at, s.expires_at
           FROM auth_sessions s JOIN users u ON u.id = s.user_id
          WHERE s.id = $1`;

export const API_KEY_SQL = `SELECT "ApiKey"."customer_id" AS "customer_id", "ApiKey"."id" AS "id", "ApiKey"."key_hash" AS "key_hash", "ApiKey"."scope" AS "scope",
                  "ApiKey"."expires_at" AS "expires_at", "ApiKey"."revoked_at" AS "revoked_at"
             FROM "api_keys" "ApiKey" WHERE (("ApiKey"."prefix" = $1)) LIMIT 1`;

/** One scheme, one space, one token of visible ASCII (the service's rule). */
export const AUTHORIZATION = /^(Bearer|Api-Key) ([\x21-\x7e]+)$/;
/** `<prefix>.<secret>`: the prefix finds the row, the secret's SHA-256 must match its hash. */
export const API_KEY = /^([a-z0-9]{12})\.([A-Za-z0-9_-]{43})$/;

export interface SessionRow {
  user_id: number;
  customer_id: number;
  role: string;
  is_active: boolean;
  revoked_at: Date | null;
  expires_at: Date;
}

export interface KeyRow {
  customer_id: number;
  id: number;
  key_hash: Buffer;
  scope: string;
  expires_at: Date | null;
  revoked_at: Date | null;
}

/** Whether the session of an access token's claims still lets it in: the service's checks. */
export function sessionAdmits(session: SessionRow | null, subject: string): session is SessionRow {
  return (
    session !== null &&
    session.is_active &&
    session.revoked_at === null &&
    session.expires_at.getTime() > Date.now() &&
    String(session.user_id) === subject
  );
}

/** Whether `key` is the key of `row`, compared in constant time, and the key is neither revoked nor expired. */
export function keyAdmits(row: KeyRow | null, key: string): row is KeyRow {
  if (row === null) return false;
  const presented = createHash('sha256').update(key, 'utf8').digest();
  const now = Date.now();
  return (
    row.key_hash.length === presented.length &&
    timingSafeEqual(presented, row.key_hash) &&
    (row.revoked_at === null || row.revoked_at.getTime() > now) &&
    (row.expires_at === null || row.expires_at.getTime() > now)
  );
}

/** Rows read once per key and kept, found or not, as the service's credential cache keeps them. */
export class CachedRows<Row> {
  private readonly rows = new Map<string, Row | null>();

  constructor(private readonly load: (key: string) => Promise<Row | null>) {}

  async get(key: string): Promise<Row | null> {
    let row = this.rows.get(key);
    if (row === undefined) {
      row = await this.load(key);
      this.rows.set(key, row);
    }
    return row;
  }
}

const RATE_WINDOW_MS = 60_000;

/** The service's fixed-window limiter: per identity key, its two RateLimit header values. */
export class RequestCounter {
  private readonly windows = new Map<string, { count: number; resetAtMs: number }>();

  constructor(private readonly limit: number) {}

  count(identityKey: string): { policy: string; remaining: string; throttled: boolean } {
    const now = Date.now();
    let window = this.windows.get(identityKey);
    if (!window || window.resetAtMs <= now) {
      window = { count: 0, resetAtMs: now + RATE_WINDOW_MS };
      this.windows.set(identityKey, window);
    }
    window.count += 1;
    const reset = Math.max(1, Math.ceil((window.resetAtMs - now) / 1000));
    return {
      policy: `"default";q=${this.limit};w=60`,
      remaining: `"default";r=${Math.max(0, this.limit - window.count)};t=${reset}`,
      throttled: window.count > this.limit,
    };
  }
}
