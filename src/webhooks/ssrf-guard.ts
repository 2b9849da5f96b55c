import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isIP } from 'node:net';

/**
 * Keeps webhooks from reaching into the network Signery runs in (Contract: WEBHOOK_ALLOW_PRIVATE,
 * "off by default: SSRF"). A callback URL must be http(s), and every address its host resolves to
 * must be public: not loopback, private, link-local, unique-local, CGNAT, multicast, unspecified,
 * reserved or documentation space, in IPv4 or IPv6, including IPv4 embedded in IPv6 (mapped,
 * compatible, NAT64, 6to4) — checked when the webhook is created and again at every delivery.
 *
 * Pinning: deliveries go through `guardedAgents`, whose connections resolve the host with the same
 * check inside the connect step (node:net's `lookup` option), so the address connected to is one
 * that was checked — a DNS answer that changes between check and connect (rebinding) cannot slip
 * through, and a kept-alive connection stays on the address checked when it was opened.
 */

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export interface CallbackPolicy {
  /** WEBHOOK_ALLOW_PRIVATE: loopback and private targets allowed (development, tests). */
  allowPrivate: boolean;
  /** How host names resolve; dns.lookup (all addresses) by default. Tests substitute their own. */
  resolve?: Resolver | undefined;
  /** Which addresses are refused, and why; `forbiddenRange` by default. Tests substitute their own. */
  classify?: ((address: string) => string | undefined) | undefined;
}

/** A callback URL the policy refuses; the message says why, without repeating the URL. */
export class CallbackRefused extends Error {
  override name = 'CallbackRefused';
}

const systemResolve: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });

/** Parses a callback URL: absolute, http or https, nothing else. */
export function parseCallbackUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CallbackRefused('callbackUrl must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CallbackRefused('callbackUrl must use http:// or https://');
  if (url.hostname === '') throw new CallbackRefused('callbackUrl must name a host');
  return url;
}

/**
 * Checks a callback URL against the policy and returns the addresses its host resolves to (none
 * are looked up when private targets are allowed). Throws CallbackRefused.
 */
export async function checkCallbackUrl(raw: string, policy: CallbackPolicy): Promise<string[]> {
  const url = parseCallbackUrl(raw);
  if (policy.allowPrivate) return [];
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const addresses = await resolveHost(host, policy.resolve ?? systemResolve);
  refuseForbidden(addresses, policy.classify ?? forbiddenRange);
  return addresses.map((a) => a.address);
}

async function resolveHost(host: string, resolve: Resolver): Promise<LookupAddress[]> {
  const family = isIP(host);
  if (family !== 0) return [{ address: host, family }];
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new CallbackRefused(
      `the callbackUrl host does not resolve${typeof code === 'string' ? ` (${code})` : ''}`,
    );
  }
  if (addresses.length === 0) throw new CallbackRefused('the callbackUrl host does not resolve');
  return addresses;
}

function refuseForbidden(
  addresses: readonly LookupAddress[],
  classify: (address: string) => string | undefined,
): void {
  for (const { address } of addresses) {
    const range = classify(address);
    if (range) {
      throw new CallbackRefused(
        `the callbackUrl host resolves to ${address} (${range}): webhooks may only call public addresses (WEBHOOK_ALLOW_PRIVATE=true permits private ones)`,
      );
    }
  }
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/** Keep-alive agents for callback requests, one per protocol, whose connections are pinned (see module comment). */
export interface GuardedAgents {
  /** The agent for a callback URL's protocol. */
  agentFor(url: URL): HttpAgent;
  /** Closes the kept connections. */
  close(): void;
}

// Below the receivers' usual keep-alive timeouts (Node's server: 5 s), so a kept connection is
// closed here before the receiver closes it under a request; a shorter `Keep-Alive: timeout` hint
// from the receiver is honoured too (Node's agent applies it).
const IDLE_CONNECTION_MS = 4_000;

/**
 * Keep-alive agents whose every connection checks, in its own DNS lookup, the addresses it is about
 * to connect to. IP-literal hosts skip that lookup, so `checkCallbackUrl` still runs before each
 * request. With private targets allowed, connections resolve as usual.
 *
 * ```ts
 * const agents = guardedAgents({ allowPrivate: false });
 * const url = new URL(callbackUrl);
 * request(url, { method: 'POST', agent: agents.agentFor(url) }).end(body);
 * agents.close();
 * ```
 */
export function guardedAgents(policy: CallbackPolicy): GuardedAgents {
  const options = {
    keepAlive: true,
    scheduling: 'lifo' as const,
    timeout: IDLE_CONNECTION_MS,
    ...(policy.allowPrivate ? {} : { lookup: guardedLookup(policy) }),
  };
  const http = new HttpAgent(options);
  const https = new HttpsAgent(options);
  return {
    agentFor: (url) => (url.protocol === 'https:' ? https : http),
    close: () => {
      http.destroy();
      https.destroy();
    },
  };
}

/** A `net.connect` lookup that resolves with the policy's resolver and refuses forbidden addresses. */
function guardedLookup(
  policy: CallbackPolicy,
): (hostname: string, options: { all?: boolean }, callback: LookupCallback) => void {
  const resolve = policy.resolve ?? systemResolve;
  const classify = policy.classify ?? forbiddenRange;
  return (hostname, options, callback) => {
    resolveHost(hostname, resolve).then(
      (addresses) => {
        try {
          refuseForbidden(addresses, classify);
        } catch (error) {
          callback(error as Error, []);
          return;
        }
        const [first] = addresses;
        if (options.all) callback(null, addresses);
        else if (first) callback(null, first.address, first.family);
      },
      (error: Error) => callback(error, []),
    );
  };
}

interface Range {
  name: string;
  /** IPv4: 32-bit value; IPv6: 128-bit value. */
  base: bigint;
  bits: number;
}

function v4(cidr: string, name: string): Range {
  const [address = '', bits = '32'] = cidr.split('/');
  return { name, base: ipv4Value(address), bits: Number(bits) };
}

function v6(cidr: string, name: string): Range {
  const [address = '', bits = '128'] = cidr.split('/');
  return { name, base: ipv6Value(address), bits: Number(bits) };
}

// IANA special-purpose registries (RFC 6890 and updates): everything not globally reachable.
const IPV4_RANGES: Range[] = [
  v4('0.0.0.0/8', 'unspecified ("this network")'),
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'carrier-grade NAT'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link-local'),
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'IETF protocol assignment'),
  v4('192.0.2.0/24', 'documentation'),
  v4('192.88.99.0/24', '6to4 relay anycast'),
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'benchmarking'),
  v4('198.51.100.0/24', 'documentation'),
  v4('203.0.113.0/24', 'documentation'),
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved'),
];

const IPV6_RANGES: Range[] = [
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('64:ff9b:1::/48', 'local-use NAT64'),
  v6('100::/64', 'discard-only'),
  v6('2001::/32', 'Teredo'),
  v6('2001:db8::/32', 'documentation'),
  v6('fc00::/7', 'unique-local'),
  v6('fe80::/10', 'link-local'),
  v6('fec0::/10', 'site-local'),
  v6('ff00::/8', 'multicast'),
];

function inRange(value: bigint, range: Range, width: number): boolean {
  const shift = BigInt(width - range.bits);
  return value >> shift === range.base >> shift;
}

/**
 * The kind of non-public address `address` is ("loopback", "private", ...), or undefined when it
 * is public. Anything that is not an IP address counts as forbidden.
 */
export function forbiddenRange(address: string): string | undefined {
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return IPV4_RANGES.find((r) => inRange(ipv4Value(bare), r, 32))?.name;
  if (family !== 6) return 'malformed';
  const value = ipv6Value(bare);
  const embedded = embeddedIpv4(value);
  if (embedded !== undefined) {
    const range = IPV4_RANGES.find((r) => inRange(embedded, r, 32));
    return range ? `${range.name} (IPv4 inside IPv6)` : undefined;
  }
  const named = IPV6_RANGES.find((r) => inRange(value, r, 128))?.name;
  if (named) return named;
  // Only 2000::/3 is allocated for global unicast; the rest is reserved.
  return inRange(value, GLOBAL_UNICAST, 128) ? undefined : 'reserved';
}

const GLOBAL_UNICAST = v6('2000::/3', 'global unicast');

const MAPPED = ipv6Value('::ffff:0:0');
const NAT64 = ipv6Value('64:ff9b::');
const SIX_TO_FOUR = ipv6Value('2002::');
const LOW_32 = (1n << 32n) - 1n;

/** The IPv4 address carried by mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64 and 6to4 forms. */
function embeddedIpv4(value: bigint): bigint | undefined {
  const top96 = value >> 32n;
  if (top96 === MAPPED >> 32n || top96 === NAT64 >> 32n) return value & LOW_32;
  // IPv4-compatible (deprecated); :: and ::1 themselves are judged as IPv6.
  if (top96 === 0n && value > 1n) return value & LOW_32;
  if (value >> 112n === SIX_TO_FOUR >> 112n) return (value >> 80n) & LOW_32;
  return undefined;
}

function ipv4Value(address: string): bigint {
  return address.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part) & 255), 0n);
}

/** 128-bit value of an IPv6 address (`::` shorthand and a trailing dotted IPv4 allowed). */
function ipv6Value(address: string): bigint {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const four = ipv4Value(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(four >> 16n).toString(16)}:${(four & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - left.length - right.length;
  const groups = tail === undefined ? left : [...left, ...Array<string>(missing).fill('0'), ...right];
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(parseInt(group || '0', 16)), 0n);
}
