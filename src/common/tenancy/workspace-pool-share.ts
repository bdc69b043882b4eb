import { ApiError } from '../errors/api-error.js';

/** The slice of pg's Pool this wraps: `connect`, in its callback form (TypeORM's) and its promise form. */
export interface ConnectablePool {
  connect: (...args: never[]) => unknown;
}

type Release = (error?: unknown) => unknown;
type ConnectCallback = (error: Error | undefined, client: { release?: Release } | undefined, release: Release | undefined) => void;

interface Waiter {
  grant: () => void;
  refuse: () => void;
}

export interface WorkspacePoolShareOptions {
  /** Connections of the pool one workspace may hold at once (WORKSPACE_POOL_SHARE). */
  share: number;
  /** How long a workspace's checkout may wait for one of its own to come free before it is refused (WORKSPACE_POOL_WAIT_MS). */
  maxWaitMs: number;
  /** Checkouts of one workspace that may wait at once; one more is refused at once. */
  maxWaiting: number;
  /** The workspace the current work is for (the request's, a job's), or undefined outside any. */
  workspaceOf: () => number | undefined;
}

/**
 * One workspace may hold at most `share` connections of the database pool at once (issue 25,
 * item 2): a workspace flooding the API (a client with many connections, an agent's tool calls)
 * then queues behind its own work, and the rest of the pool stays free for the other workspaces.
 * Its checkouts past the share wait, first come first served, for one of its own connections to
 * come back, at most `maxWaitMs`; then, or when `maxWaiting` already wait, the work is refused
 * with 429 `throttled` and `Retry-After`. Work outside any workspace (sign-in, health checks) is not
 * counted. It counts checkouts, not requests: a request that holds no connection (waiting on a
 * platform, hashing a password) costs nothing, so a workspace alone still gets the whole share.
 */
export class WorkspacePoolShare {
  private readonly held = new Map<number, number>();
  private readonly waiting = new Map<number, Waiter[]>();

  constructor(private readonly options: WorkspacePoolShareOptions) {}

  /** Connections `workspace` holds now (for tests and metrics). */
  holding(workspace: number): number {
    return this.held.get(workspace) ?? 0;
  }

  /**
   * Makes every checkout of `pool` go through the workspace's share first. A workspace under its
   * share goes straight on to the pool, in the same tick (no promise): that is every checkout but
   * those of a workspace that holds its whole share.
   */
  guard(pool: ConnectablePool): void {
    const connect = pool.connect.bind(pool) as (callback?: ConnectCallback) => unknown;
    const checkout = (workspace: number, callback: ConnectCallback | undefined): unknown => {
      if (callback) return connect((error, client, release) => this.handOver(workspace, error, client, release, callback));
      return (connect() as Promise<{ release: Release }>).then(
        (client) => {
          client.release = this.releasing(workspace, client.release);
          return client;
        },
        (error: unknown) => {
          this.release(workspace);
          throw error;
        },
      );
    };
    pool.connect = ((callback?: ConnectCallback) => {
      const workspace = this.options.workspaceOf();
      if (workspace === undefined) return callback ? connect(callback) : connect();
      if (this.tryAcquire(workspace)) return checkout(workspace, callback);
      const granted = this.waitForShare(workspace);
      if (!callback) return granted.then(() => checkout(workspace, undefined));
      granted.then(
        () => checkout(workspace, callback),
        (error: Error) => callback(error, undefined, undefined),
      );
      return undefined;
    }) as ConnectablePool['connect'];
  }

  /** The pool's answer to a callback checkout, with the workspace's slot tied to the connection's release. */
  private handOver(
    workspace: number,
    error: Error | undefined,
    client: { release?: Release } | undefined,
    release: Release | undefined,
    callback: ConnectCallback,
  ): void {
    if (error || !client || !release) {
      this.release(workspace);
      callback(error, client, release);
      return;
    }
    const releasing = this.releasing(workspace, release);
    client.release = releasing;
    callback(undefined, client, releasing);
  }

  /** `release`, freeing the workspace's slot the first time it is called (pg refuses a second release anyway). */
  private releasing(workspace: number, release: Release): Release {
    let released = false;
    return (error?: unknown) => {
      if (!released) {
        released = true;
        this.release(workspace);
      }
      return release(error);
    };
  }

  /** Takes one of the workspace's slots when it holds fewer than its share. */
  private tryAcquire(workspace: number): boolean {
    const held = this.held.get(workspace) ?? 0;
    if (held >= this.options.share) return false;
    this.held.set(workspace, held + 1);
    return true;
  }

  /** Waits, first come first served, for a slot the workspace frees; refused past maxWaiting or after maxWaitMs. */
  private waitForShare(workspace: number): Promise<void> {
    const queue = this.waiting.get(workspace) ?? [];
    if (queue.length >= this.options.maxWaiting) return Promise.reject(tooMuchAtOnce());
    this.waiting.set(workspace, queue);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        // A slot handed over by release(): it stays counted, now for this checkout.
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
        refuse: () => reject(tooMuchAtOnce()),
      };
      const timer = setTimeout(() => {
        const index = queue.indexOf(waiter);
        if (index >= 0) queue.splice(index, 1);
        if (queue.length === 0) this.waiting.delete(workspace);
        waiter.refuse();
      }, this.options.maxWaitMs);
      queue.push(waiter);
    });
  }

  private release(workspace: number): void {
    const queue = this.waiting.get(workspace);
    const next = queue?.shift();
    if (queue?.length === 0) this.waiting.delete(workspace);
    if (next) {
      next.grant();
      return;
    }
    const held = (this.held.get(workspace) ?? 1) - 1;
    if (held <= 0) this.held.delete(workspace);
    else this.held.set(workspace, held);
  }
}

function tooMuchAtOnce(): ApiError {
  return new ApiError(429, 'throttled', 'Your workspace has too many requests running at once. Try again in a second.', undefined, {
    'retry-after': '1',
  });
}
