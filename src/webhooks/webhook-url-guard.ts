import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Why a webhook URL is refused; the message is safe to show to the admin who typed it. */
export class WebhookUrlRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookUrlRefusedError';
  }
}

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * Where deliveries may go (SPEC 10.5). In production: https only, and every address the host
 * resolves to must be public unicast. Outside production http is allowed and addresses are not
 * checked, so a developer can point an endpoint at a receiver on localhost.
 */
export interface WebhookUrlPolicy {
  readonly production: boolean;
}

/**
 * The one range ipaddr.js names for an ordinary public address. Everything else it classifies is
 * refused: loopback, private (RFC 1918), carrier-grade NAT (100.64/10), link-local (169.254/16,
 * fe80::/10, so the cloud metadata address 169.254.169.254 too), unique local (fc00::/7),
 * unspecified, broadcast, multicast, reserved, and the IPv6 forms that carry or translate an IPv4
 * address (6to4, Teredo, NAT64), whose far end we cannot judge.
 */
const PUBLIC_RANGE = 'unicast';

/** The reason an address may not receive deliveries, or undefined when it may. */
export function refusedAddressReason(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'is not an IP address';
  let parsed = ipaddr.parse(address);
  // ::ffff:127.0.0.1 reaches 127.0.0.1: judge the IPv4 address it carries.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  if (range === PUBLIC_RANGE) return undefined;
  return `is ${RANGE_WORDS[range] ?? `a special-purpose address (${range})`}`;
}

/** The refused ranges in words, for the 400 an admin reads; the rest are named by ipaddr.js's own term. */
const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address (RFC 1918)',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10)',
  linkLocal: 'a link-local address (where cloud metadata services answer)',
  uniqueLocal: 'a unique local address (fc00::/7)',
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
  rfc6052: 'a NAT64 address (64:ff9b::/96)',
  '6to4': 'a 6to4 address (2002::/16)',
  teredo: 'a Teredo address (2001::/32)',
};

/** The URL's shape: absolute, http(s) (https in production), no credentials, no fragment. */
export function parseWebhookUrl(raw: string, policy: WebhookUrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlRefusedError('Enter a valid URL.');
  }
  const protocols = policy.production ? ['https:'] : ['http:', 'https:'];
  if (!protocols.includes(url.protocol))
    throw new WebhookUrlRefusedError(policy.production ? 'The URL must use https.' : 'The URL must use http or https.');
  if (url.username || url.password) throw new WebhookUrlRefusedError('The URL may not contain a user name or password.');
  if (url.hash) throw new WebhookUrlRefusedError('The URL may not contain a fragment (#).');
  return url;
}

/** The host as a resolver takes it: an IPv6 literal without its brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

export type Resolver = (host: string) => Promise<string[]>;

/** Every address the system resolver gives for a host (A and AAAA), as `getaddrinfo` does for a connect. */
export const systemResolver: Resolver = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * The addresses a delivery to this URL may connect to: all of them, checked in production (one
 * refused address refuses the URL: a resolver may hand out any of them). Throws
 * WebhookUrlRefusedError with the reason.
 */
export async function allowedAddresses(url: URL, policy: WebhookUrlPolicy, resolve: Resolver = systemResolver): Promise<string[]> {
  const host = hostOf(url);
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      throw new WebhookUrlRefusedError(`The host ${host.slice(0, 255)} could not be resolved.`);
    }
    if (addresses.length === 0) throw new WebhookUrlRefusedError(`The host ${host.slice(0, 255)} has no address.`);
  }
  if (policy.production) {
    for (const address of addresses) {
      const reason = refusedAddressReason(address);
      if (reason !== undefined)
        throw new WebhookUrlRefusedError(
          `The URL must reach a public address; ${host === address ? host : `${host.slice(0, 255)} resolves to ${address}, which`} ${reason}.`,
        );
    }
  }
  return addresses;
}

/** The whole check at create and update: shape, then (in production) every resolved address. */
export async function checkWebhookUrl(raw: string, policy: WebhookUrlPolicy, resolve?: Resolver): Promise<URL> {
  const url = parseWebhookUrl(raw, policy);
  if (policy.production) await allowedAddresses(url, policy, resolve);
  return url;
}
