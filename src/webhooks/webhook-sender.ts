import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { retryAfterSeconds } from '../common/http/provider-call.js';
import {
  allowedAddresses,
  hostOf,
  type Resolver,
  systemResolver,
  WebhookUrlRefusedError,
  type WebhookUrlPolicy,
} from './webhook-url-guard.js';

/** How one try went: a success is a 2xx within the time-out; the error is in words, for the deliveries list. */
export interface AttemptOutcome {
  succeeded: boolean;
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
  /** The answer's `Retry-After`, in seconds, when a failed one gave it (a 429 or 503 may). */
  retryAfterSeconds?: number;
}

export interface SendOptions {
  timeoutMs: number;
  policy: WebhookUrlPolicy;
  resolve?: Resolver;
}

/** The most of an answer's body read (and thrown away) before the try counts as done. */
const MAX_ANSWER_BYTES = 64 * 1024;
const USER_AGENT = 'AudienceSignalPlatform-Webhooks/1.0';

/**
 * One POST of a signed delivery. Not the provider-call helper: fetch resolves the host itself, so
 * the address checked against SSRF could differ from the one it connects to (DNS rebinding: a
 * name that answers a public address to the check and 127.0.0.1 to the connect). Here the host is
 * resolved once, every address is checked (in production), and the socket connects to the
 * checked address through the request's own `lookup`; TLS still verifies the certificate against
 * the host name. Redirects are never followed (node:http does not), and a 3xx is a failure.
 */
export async function sendDelivery(
  url: URL,
  headers: Record<string, string>,
  body: string,
  { timeoutMs, policy, resolve = systemResolver }: SendOptions,
): Promise<AttemptOutcome> {
  const started = process.hrtime.bigint();
  const elapsed = () => Math.round(Number(process.hrtime.bigint() - started) / 1e6);
  let address: string;
  try {
    address = (await allowedAddresses(url, policy, resolve))[0]!;
  } catch (error) {
    const message = error instanceof WebhookUrlRefusedError ? error.message : 'The host could not be resolved.';
    return { succeeded: false, responseStatus: null, durationMs: elapsed(), error: message };
  }
  const family = isIP(address);
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<AttemptOutcome>((settle) => {
    let done = false;
    const finish = (outcome: Omit<AttemptOutcome, 'durationMs'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      request.destroy();
      settle({ ...outcome, durationMs: elapsed() });
    };
    const request = client.request(
      url,
      {
        method: 'POST',
        // A fresh connection per try: no pooled socket to an address checked earlier.
        agent: false,
        lookup: isIP(hostOf(url)) === 0 ? pinned : undefined,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': USER_AGENT,
        },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) response.destroy();
        });
        const retryAfter = retryAfterSeconds(headerOf(response.headers['retry-after']));
        const judge = () =>
          finish(
            status >= 200 && status < 300
              ? { succeeded: true, responseStatus: status, error: null }
              : { succeeded: false, responseStatus: status, error: answerError(status), retryAfterSeconds: retryAfter },
          );
        response.on('end', judge);
        response.on('close', judge);
        response.on('error', judge);
      },
    );
    const timer = setTimeout(
      () => finish({ succeeded: false, responseStatus: null, error: `No answer within ${timeoutMs} ms.` }),
      timeoutMs,
    );
    request.on('error', (error: NodeJS.ErrnoException) => finish({ succeeded: false, responseStatus: null, error: networkError(error) }));
    request.end(body);
  });
}

function headerOf(value: string | string[] | undefined): string | null {
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

function answerError(status: number): string {
  if (status >= 300 && status < 400) return `The endpoint answered ${status}, a redirect; redirects are not followed.`;
  return `The endpoint answered ${status}; only a 2xx counts as received.`;
}

/** A network failure in words, without the address or anything else the endpoint did not say. */
function networkError(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'The connection was refused.';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'The connection was closed before an answer came.';
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'The endpoint could not be reached.';
    default:
      if (error.code?.startsWith('ERR_TLS') || error.code?.includes('CERT') || /certificate|SSL|TLS/i.test(error.message))
        return 'The TLS handshake failed (certificate not valid for the host, or not trusted).';
      return 'The request failed before an answer came.';
  }
}
