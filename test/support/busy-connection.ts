import { connect, type Socket } from 'node:net';

export interface Answer {
  status: number;
  /** The answer's `Connection` header, lowercased (undefined when absent: keep-alive in HTTP/1.1). */
  connection: string | undefined;
  /** Whether its request went out after `closingStarted()` said the server was closing. */
  requestedWhileClosing: boolean;
}

/**
 * One kept-alive HTTP/1.1 connection kept busy, as a client under load keeps it: each request goes
 * out the moment the last answer is in, until an answer says `Connection: close` (then it waits for
 * the server to end the connection) or `stop()`. Raw sockets, so nothing retries or hides a reset.
 */
export class BusyConnection {
  readonly answers: Answer[] = [];
  requestsSent = 0;
  /** A socket error: a reset, a write to a closed connection. */
  error: Error | undefined;
  /** Resolves when the connection has closed, whoever closed it. */
  readonly closed: Promise<void>;
  private readonly socket: Socket;
  private buffer = Buffer.alloc(0);
  private stopped = false;
  private lastRequestWhileClosing = false;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly path: string,
    private readonly closingStarted: () => boolean,
  ) {
    this.socket = connect(port, host);
    this.socket.on('error', (error) => (this.error = error));
    this.socket.on('data', (chunk: Buffer) => this.received(chunk));
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
    this.socket.once('connect', () => this.send());
  }

  /** Sends no further request; the connection stays open (idle) until the server closes it. */
  stop(): void {
    this.stopped = true;
  }

  /** Requests sent that got no answer: a connection closed under a request on its way. */
  get unanswered(): number {
    return this.requestsSent - this.answers.length;
  }

  private send(): void {
    if (this.stopped || this.socket.destroyed) return;
    this.lastRequestWhileClosing = this.closingStarted();
    this.requestsSent++;
    this.socket.write(`GET ${this.path} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\n\r\n`);
  }

  private received(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headEnd = this.buffer.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = this.buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
      const headers = new Map(
        head.slice(1).map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      const bodyStart = headEnd + 4;
      let end: number;
      if (headers.get('transfer-encoding')?.toLowerCase() === 'chunked') {
        const last = this.buffer.indexOf('\r\n0\r\n\r\n', bodyStart - 2);
        if (last < 0) return;
        end = last + '\r\n0\r\n\r\n'.length;
      } else {
        end = bodyStart + Number(headers.get('content-length') ?? 0);
        if (this.buffer.length < end) return;
      }
      this.buffer = this.buffer.subarray(end);
      const connection = headers.get('connection')?.toLowerCase();
      this.answers.push({ status: Number(head[0]!.split(' ')[1]), connection, requestedWhileClosing: this.lastRequestWhileClosing });
      if (connection === 'close') this.stopped = true;
      else this.send();
    }
  }
}
