import { connect } from 'node:net';
import { BusyConnection } from './support/busy-connection.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/**
 * SIGTERM in main.ts runs closeGracefully(): this checks what matters to clients, that a request
 * already in flight is answered (its database work included) before the pool and server go away,
 * and that no new connection is taken meanwhile.
 */
describe('graceful shutdown', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp();
  });

  it('answers a request that is in flight when the app closes, and refuses new connections', async () => {
    const url = new URL(api.baseUrl);
    const body = JSON.stringify({ email: 'nobody@example.com', password: 'wrong password' });
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    let response = '';
    socket.on('data', (chunk) => (response += chunk.toString()));
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));

    // Headers and half the body now: the request is in flight, its handler not yet run.
    socket.write(
      `POST /api/v1/jwt/create/ HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    let closed = false;
    const closing = api.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed).toBe(false);

    const refused = await fetch(`${api.baseUrl}/healthz`).then(
      () => 'answered',
      () => 'refused',
    );
    expect(refused).toBe('refused');

    socket.write(body.slice(10));
    await closing;
    await ended;
    expect(response).toMatch(/^HTTP\/1\.1 401 /);
    expect(response).toContain('authentication_failed');
  });
});

describe('graceful shutdown with keep-alive clients', () => {
  it('ends the connection of an in-flight request with Connection: close, and closes idle ones without a reset', async () => {
    const api = await startTestApp();
    const url = new URL(api.baseUrl);
    const open = async () => {
      const socket = connect(Number(url.port), url.hostname);
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      const state = { data: '', error: undefined as Error | undefined };
      socket.on('data', (chunk) => (state.data += chunk.toString()));
      socket.on('error', (error) => (state.error = error));
      const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      return { socket, state, ended };
    };

    // An idle keep-alive connection: one request answered, nothing sent since.
    const idle = await open();
    idle.socket.write(`GET /healthz HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(idle.state.data).toMatch(/^HTTP\/1\.1 200 /);
    expect(idle.state.data.toLowerCase()).toContain('connection: keep-alive');

    // A request in flight: headers and half its body.
    const busy = await open();
    const body = JSON.stringify({ email: 'nobody@example.com', password: 'wrong password' });
    busy.socket.write(
      `POST /api/v1/jwt/create/ HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));

    // The idle one stays open while the other request runs (a request of its client may be on
    // its way), and is closed without a reset once the shutdown is done.
    const closing = api.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(idle.socket.destroyed).toBe(false);

    busy.socket.write(body.slice(10));
    await closing;
    await Promise.all([busy.ended, idle.ended]);
    expect(idle.state.error).toBeUndefined();
    expect(busy.state.error).toBeUndefined();
    expect(busy.state.data).toMatch(/^HTTP\/1\.1 401 /);
    expect(busy.state.data.toLowerCase()).toContain('connection: close');
  });

  it('resets no busy connection: every answer to a request sent after the close began carries Connection: close, and each connection ends after its last answer', async () => {
    const api = await startTestApp();
    const url = new URL(api.baseUrl);
    let closing = false;
    // Eight clients, each sending its next request the moment it has the last answer (/readyz asks PostgreSQL).
    const connections = Array.from({ length: 8 }, () => new BusyConnection(url.hostname, Number(url.port), '/readyz', () => closing));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(connections.every((connection) => connection.answers.length > 0)).toBe(true);

    // The same close path as SIGTERM (closeGracefully), begun at once by close().
    closing = true;
    await api.close();
    await Promise.all(connections.map((connection) => connection.closed));

    for (const [index, connection] of connections.entries()) {
      const afterClose = connection.answers.filter((answer) => answer.requestedWhileClosing);
      expect({
        index,
        error: connection.error?.message,
        unanswered: connection.unanswered,
        lastAnswer: connection.answers.at(-1)?.connection,
        keptAliveWhileClosing: afterClose.filter((answer) => answer.connection !== 'close').length,
        statuses: [...new Set(connection.answers.map((answer) => answer.status))],
      }).toEqual({ index, error: undefined, unanswered: 0, lastAnswer: 'close', keptAliveWhileClosing: 0, statuses: [200] });
    }
  });
});
