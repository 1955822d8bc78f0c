/**
 * TRUST_PROXY: which direct peers are reverse proxies whose X-Forwarded-For is believed.
 * The client address is the rightmost X-Forwarded-For entry that is not a trusted proxy
 * (each proxy appends the peer it saw, so entries left of that one are whatever the
 * client chose to send and are never read). Without TRUST_PROXY, or from any other peer,
 * it is the socket's peer, so nobody can pick their own address by sending the header.
 */
import { BlockList, isIP } from 'node:net';
import type { ClientAddressOf } from './engine.ts';

export type { ClientAddressOf } from './engine.ts';

export interface TrustedProxy {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

export const TRUST_PROXY_FORM =
  'comma-separated IP addresses or CIDR ranges (IPv4 or IPv6), or loopback, e.g. 10.0.0.0/8,fd00::/8,loopback';

// The keyword stands for both loopback ranges, as a proxy on the same host connects over either.
const LOOPBACK: TrustedProxy[] = [
  { address: '127.0.0.0', prefix: 8, family: 'ipv4' },
  { address: '::1', prefix: 128, family: 'ipv6' },
];

/**
 * An address in one spelling: IPv6 compressed and lower-case (uWS reports the long form),
 * IPv4-mapped IPv6 (a dual-stack socket's view of an IPv4 peer) as plain IPv4. Null when
 * the text is not an address.
 */
export function canonicalAddress(raw: string): string | null {
  const text = raw.trim();
  if (isIP(text) === 4) return text;
  if (isIP(text) !== 6) return null;
  const compressed = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
  if (!mapped) return compressed;
  const high = Number.parseInt(mapped[1]!, 16);
  const low = Number.parseInt(mapped[2]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** TRUST_PROXY's entries, or an error naming the first one that is not an address or range. */
export function parseTrustProxy(raw: string | undefined): TrustedProxy[] | null {
  if (raw === undefined || raw.trim() === '') return null;
  const proxies: TrustedProxy[] = [];
  for (const entry of raw.split(',').map((item) => item.trim())) {
    if (entry.toLowerCase() === 'loopback') {
      proxies.push(...LOOPBACK);
      continue;
    }
    const parsed = parseEntry(entry);
    if (!parsed) throw new Error(`TRUST_PROXY: "${entry.slice(0, 80)}" is not ${TRUST_PROXY_FORM}`);
    proxies.push(parsed);
  }
  return proxies;
}

function parseEntry(entry: string): TrustedProxy | null {
  const slash = entry.indexOf('/');
  const address = canonicalAddress(slash === -1 ? entry : entry.slice(0, slash));
  if (!address) return null;
  const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
  const max = family === 'ipv4' ? 32 : 128;
  if (slash === -1) return { address, prefix: max, family };
  const prefixText = entry.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) return null;
  return { address, prefix: Number(prefixText), family };
}

/** One X-Forwarded-For entry as an address: `[v6]`, `[v6]:port` and `v4:port` occur in the wild. */
function forwardedAddress(entry: string): string | null {
  const text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) return canonicalAddress(bracketed[1]!);
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(text);
  return canonicalAddress(withPort ? withPort[1]! : text);
}

/**
 * canonicalAddress for socket peers, remembered: it runs on every request, uWS reports IPv6
 * in the long form (3 µs each through URL), and a listener sees the same few peers again
 * and again. Cleared when full rather than evicting one by one: a refill is cheap.
 */
function peerCanonicalizer(): (peer: string) => string | null {
  const seen = new Map<string, string | null>();
  return (peer) => {
    let known = seen.get(peer);
    if (known === undefined) {
      if (seen.size >= 4096) seen.clear();
      known = canonicalAddress(peer);
      seen.set(peer, known);
    }
    return known;
  };
}

/** The client address rule for these trusted proxies (none: always the peer). */
export function clientAddressRule(proxies: TrustedProxy[] | null): ClientAddressOf {
  const canonicalPeer = peerCanonicalizer();
  if (!proxies) return (peer) => canonicalPeer(peer) ?? peer;
  const trusted = new BlockList();
  for (const proxy of proxies) trusted.addSubnet(proxy.address, proxy.prefix, proxy.family);
  const isTrusted = (address: string) => trusted.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
  return (peer, forwardedFor) => {
    let client = canonicalPeer(peer);
    if (!client) return peer;
    if (!forwardedFor) return client;
    const hops = forwardedFor.split(',');
    for (let at = hops.length - 1; at >= 0 && isTrusted(client); at -= 1) {
      const hop = forwardedAddress(hops[at]!);
      // A trusted proxy that forwarded something unreadable is itself the last address known.
      if (!hop) return client;
      client = hop;
    }
    return client;
  };
}
