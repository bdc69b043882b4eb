import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { discardBody } from './discard-body.js';

describe('discardBody when the connection breaks in the middle of a body', () => {
  let server: Server;
  let url: URL;

  // Promises a megabyte, sends 100 bytes and hangs up: the body's stream ends in an error.
  beforeAll(async () => {
    server = createServer((_request, response) => {
      response.writeHead(200, { 'content-length': '1000000' });
      response.write('x'.repeat(100));
      setTimeout(() => response.socket?.destroy(), 20);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** An answer whose connection has broken: read to its end through a clone, which errors both. */
  async function broken(): Promise<Response> {
    const response = await fetch(new URL('/ok', url));
    await expect(response.clone().arrayBuffer()).rejects.toThrow('terminated');
    return response;
  }

  it('discards a body whose connection already broke without throwing', async () => {
    await expect((await broken()).body!.cancel()).rejects.toThrow('terminated');
    await expect(discardBody(await broken())).resolves.toBeUndefined();
  });
});
