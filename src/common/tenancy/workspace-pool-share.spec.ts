import { jest } from '@jest/globals';
import { ApiError } from '../errors/api-error.js';
import { WorkspacePoolShare } from './workspace-pool-share.js';

type Release = (error?: unknown) => void;
type Callback = (error: Error | undefined, client: { id: number; release?: Release } | undefined, release: Release | undefined) => void;

/** A pool of `size` connections that hands them out at once while it has one (pg's Pool, callback form). */
function fakePool(size: number) {
  let free = size;
  let next = 1;
  const pool = {
    released: 0,
    connect: ((callback: Callback) => {
      if (free === 0) {
        callback(new Error('pool exhausted'), undefined, undefined);
        return;
      }
      free--;
      const release: Release = () => {
        free++;
        pool.released++;
      };
      callback(undefined, { id: next++, release }, release);
    }) as (...args: never[]) => unknown,
  };
  return pool;
}

/** Checks a connection out as TypeORM does; resolves with its release, or rejects with the error. */
function checkout(pool: { connect: (...args: never[]) => unknown }): Promise<Release> {
  return new Promise((resolve, reject) =>
    (pool.connect as unknown as (callback: Callback) => void)((error, _client, release) => (error ? reject(error) : resolve(release!))),
  );
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('WorkspacePoolShare', () => {
  let workspace: number | undefined;
  const share = (options: { share?: number; maxWaitMs?: number; maxWaiting?: number } = {}) =>
    new WorkspacePoolShare({ share: 2, maxWaitMs: 1000, maxWaiting: 10, workspaceOf: () => workspace, ...options });

  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it('lets one workspace hold its share and no more, while another gets a connection at once', async () => {
    const pool = fakePool(4);
    const shares = share();
    shares.guard(pool);
    workspace = 1;
    await checkout(pool);
    await checkout(pool);
    let third = false;
    void checkout(pool).then(() => (third = true));
    await settled();
    expect({ holding: shares.holding(1), third }).toEqual({ holding: 2, third: false });

    workspace = 2;
    await expect(checkout(pool)).resolves.toEqual(expect.any(Function));
    expect(shares.holding(2)).toBe(1);
  });

  it('hands a released connection to the workspace that waits, first come first served', async () => {
    const pool = fakePool(4);
    const shares = share();
    shares.guard(pool);
    workspace = 1;
    const first = await checkout(pool);
    await checkout(pool);
    const order: string[] = [];
    const waiting = [checkout(pool).then(() => order.push('a')), checkout(pool).then(() => order.push('b'))];
    await settled();
    first();
    await waiting[0];
    expect(order).toEqual(['a']);
    expect(shares.holding(1)).toBe(2);
    expect(pool.released).toBe(1);
  });

  it('refuses work that waited longer than maxWaitMs with 429 throttled and Retry-After', async () => {
    const pool = fakePool(4);
    share({ maxWaitMs: 500 }).guard(pool);
    workspace = 1;
    await checkout(pool);
    await checkout(pool);
    const waiting = checkout(pool);
    jest.advanceTimersByTime(500);
    const error = (await waiting.catch((caught: unknown) => caught)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect({ status: error.getStatus(), code: error.code, headers: error.headers }).toEqual({
      status: 429,
      code: 'throttled',
      headers: { 'retry-after': '1' },
    });
  });

  it('refuses at once when maxWaiting already wait', async () => {
    const pool = fakePool(8);
    share({ maxWaiting: 1 }).guard(pool);
    workspace = 1;
    await checkout(pool);
    await checkout(pool);
    void checkout(pool).catch(() => undefined);
    await expect(checkout(pool)).rejects.toMatchObject({ code: 'throttled' });
  });

  it('frees the slot when the pool itself fails the checkout, and counts a double release once', async () => {
    const pool = fakePool(1);
    const shares = share();
    shares.guard(pool);
    workspace = 1;
    const release = await checkout(pool);
    await expect(checkout(pool)).rejects.toThrow('pool exhausted');
    expect(shares.holding(1)).toBe(1);
    release();
    release();
    expect(shares.holding(1)).toBe(0);
  });

  it('counts nothing outside a workspace', async () => {
    const pool = fakePool(3);
    const shares = share({ share: 1 });
    shares.guard(pool);
    workspace = undefined;
    await checkout(pool);
    await checkout(pool);
    await checkout(pool);
    expect(shares.holding(1)).toBe(0);
  });
});
