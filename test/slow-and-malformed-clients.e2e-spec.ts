import { connect } from 'node:net';
import { bearer, createUser, createWorkspace, login } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/** What the server wrote on a raw connection before it closed it. */
function rawExchange(api: TestApp, write: (send: (text: string) => void) => void): Promise<string> {
  const { hostname, port } = new URL(api.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' || error.code === 'EPIPE' ? resolve(received) : reject(error),
    );
    socket.on('connect', () => write((text) => socket.writable && socket.write(text)));
  });
}

function parse(answer: string): { status: number; headers: Record<string, string>; body: Record<string, unknown> } {
  const [head, body] = answer.split('\r\n\r\n');
  const [statusLine, ...lines] = head!.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body!) as Record<string, unknown> };
}

describe('clients that send too slowly or send what HTTP cannot parse', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp({ REQUEST_TIMEOUT_MS: '1000' });
  });
  afterAll(() => api.close());

  it('answers a body that trickles in past REQUEST_TIMEOUT_MS with 408 and closes the connection, without credentials', async () => {
    let timer: NodeJS.Timeout | undefined;
    const started = Date.now();
    const answer = await rawExchange(api, (send) => {
      send('POST /api/v1/jwt/create/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
      timer = setInterval(() => send(' '), 200);
    });
    clearInterval(timer);
    // Bounded well below the 330 s a trickling body was held before; the deadline is checked every second.
    expect(Date.now() - started).toBeLessThan(5000);
    const { status, headers, body } = parse(answer);
    expect(status).toBe(408);
    expect(headers['content-type']).toBe('application/problem+json');
    expect(headers.connection).toBe('close');
    expect(body).toMatchObject({ status: 408, code: 'parse_error', request_id: headers['x-request-id'] });
  });

  it('lets a streamed import upload take longer than REQUEST_TIMEOUT_MS while it keeps sending (its own idle timeout bounds it)', async () => {
    const workspace = await createWorkspace(api);
    const { authorization } = bearer((await login(api, await createUser(api, workspace, { role: 'editor' }))).access);
    const rows = ['external_id,email\n', ...Array.from({ length: 10 }, (_, index) => `slow-${index},slow${index}@example.org\n`)];
    const length = rows.reduce((total, row) => total + Buffer.byteLength(row), 0);
    let timer: NodeJS.Timeout | undefined;
    const started = Date.now();
    const answer = await rawExchange(api, (send) => {
      send(
        `POST /api/v1/imports/?target=people HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${authorization}\r\nContent-Type: text/csv\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`,
      );
      // One row every 250 ms: 2.75 s in all, well past the 1 s deadline of an ordinary body.
      let next = 0;
      timer = setInterval(() => {
        send(rows[next++]!);
        if (next === rows.length) clearInterval(timer);
      }, 250);
    });
    clearInterval(timer);
    expect(Date.now() - started).toBeGreaterThan(2500);
    const { status, body } = parse(answer);
    expect(status).toBe(202);
    expect(body).toMatchObject({ target: 'people', rows_total: 10 });
  });

  it('answers headers over 16 KiB with a 431 problem body and a request id', async () => {
    const answer = await rawExchange(api, (send) =>
      send(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    const { status, headers, body } = parse(answer);
    expect(status).toBe(431);
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(body).toMatchObject({ status: 431, code: 'payload_too_large', request_id: headers['x-request-id'] });
  });

  it('answers a request HTTP cannot parse with a 400 problem body', async () => {
    const answer = await rawExchange(api, (send) => send('GET /healthz HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n'));
    const { status, headers, body } = parse(answer);
    expect(status).toBe(400);
    expect(body).toMatchObject({
      status: 400,
      code: 'parse_error',
      detail: 'Malformed HTTP request.',
      request_id: headers['x-request-id'],
    });
  });
});
