import { Writable } from 'node:stream';
import { QueryFailedError } from 'typeorm';
import { createLogger } from './logger.js';

function capture(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('logged errors', () => {
  it('keep the SQL, SQLSTATE and constraint of a failed statement, never its parameters or row values', () => {
    const { stream, lines } = capture();
    const logger = createLogger({ logLevel: 'info' }, stream);
    const driverError = Object.assign(new Error('duplicate key value violates unique constraint "users_email_key"'), {
      code: '23505',
      constraint: 'users_email_key',
      detail: 'Key (email)=(secret-person@example.com) already exists.',
    });
    const error = new QueryFailedError(
      'INSERT INTO users (email, token_hash) VALUES ($1, $2)',
      ['secret-person@example.com', 'hash-abc'],
      driverError,
    );
    logger.error({ err: error, request_id: 'r-1' }, 'unhandled error');

    const [line] = lines();
    const text = JSON.stringify(line);
    expect(text).not.toContain('secret-person');
    expect(text).not.toContain('hash-abc');
    expect(line).toMatchObject({
      request_id: 'r-1',
      err: {
        type: 'QueryFailedError',
        query: 'INSERT INTO users (email, token_hash) VALUES ($1, $2)',
        code: '23505',
        constraint: 'users_email_key',
      },
    });
  });

  it('still log ordinary errors with their message and stack', () => {
    const { stream, lines } = capture();
    createLogger({ logLevel: 'info' }, stream).error({ err: new Error('boom') }, 'failed');
    expect(lines()[0]).toMatchObject({ err: { type: 'Error', message: 'boom', stack: expect.stringContaining('boom') } });
  });
});
