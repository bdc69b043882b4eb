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

  it('discards a body whose connection already broke without throwing', async () => {
    const response = await fetch(new URL('/ok', url));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await expect(response.body!.cancel()).rejects.toThrow('terminated');
    const again = await fetch(new URL('/ok', url));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await expect(discardBody(again)).resolves.toBeUndefined();
  });
});
