import { KeelError } from '@keel/core';
import { optionError } from '@keel/core/adapter';
import {
  type AddressBytes,
  type AddressRange,
  formatAddress,
  inRange,
  parseAddress,
  parseRange,
} from './ip-address.js';

/** A range an HTTP tool refuses by default, and why. */
interface BlockedRange extends AddressRange {
  readonly label: string;
}

function range(cidr: string, label: string): BlockedRange {
  return { ...parseRange(cidr)!, label };
}

/**
 * Addresses an HTTP tool refuses to connect to unless allowed: loopback, private (RFC 1918), shared (CGNAT),
 * link-local, cloud metadata, unique-local, unspecified, multicast, and the reserved, documentation and benchmarking
 * ranges no public service lives in. IPv6 forms that embed an IPv4 address (mapped `::ffff:a.b.c.d`, NAT64
 * `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that IPv4 address. The more specific label comes first.
 */
const BLOCKED_RANGES: readonly BlockedRange[] = [
  range('169.254.169.254/32', 'cloud metadata'),
  range('0.0.0.0/8', 'unspecified ("this network")'),
  range('10.0.0.0/8', 'private (RFC 1918)'),
  range('100.64.0.0/10', 'shared address space (CGNAT)'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local'),
  range('172.16.0.0/12', 'private (RFC 1918)'),
  range('192.0.0.0/24', 'IETF protocol assignments'),
  range('192.0.2.0/24', 'documentation'),
  range('192.168.0.0/16', 'private (RFC 1918)'),
  range('198.18.0.0/15', 'benchmarking'),
  range('198.51.100.0/24', 'documentation'),
  range('203.0.113.0/24', 'documentation'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved'),
  range('fd00:ec2::254/128', 'cloud metadata'),
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('::/96', 'IPv4-compatible (deprecated)'),
  range('64:ff9b:1::/48', 'local-use NAT64'),
  range('100::/64', 'discard-only'),
  range('2001::/32', 'Teredo'),
  range('2001:db8::/32', 'documentation'),
  range('fc00::/7', 'unique local (private)'),
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'site-local (deprecated)'),
  range('ff00::/8', 'multicast'),
];

/** IPv6 ranges whose addresses carry an IPv4 address, and where it starts. */
const EMBEDDING_RANGES: readonly { range: AddressRange; offset: number }[] = [
  { range: parseRange('::ffff:0:0/96')!, offset: 12 },
  { range: parseRange('64:ff9b::/96')!, offset: 12 },
  { range: parseRange('2002::/16')!, offset: 2 },
];

/** The IPv4 address an IPv6 address embeds, if it is of a form that does. */
function embeddedIpv4(address: AddressBytes): AddressBytes | undefined {
  if (address.length !== 16) return undefined;
  const match = EMBEDDING_RANGES.find((entry) => inRange(address, entry.range));
  return match === undefined ? undefined : address.slice(match.offset, match.offset + 4);
}

/** Why an address is refused by default, or undefined when it is public. */
export function blockedLabel(address: AddressBytes): string | undefined {
  const inner = embeddedIpv4(address);
  if (inner !== undefined) return blockedLabel(inner);
  return BLOCKED_RANGES.find((blocked) => inRange(address, blocked))?.label;
}

/** Decides which hosts and addresses an HTTP tool may connect to. */
export interface AddressPolicy {
  /** Throws `tool.permission_denied` unless `address`, which `hostname` resolved to (or is), may be reached. */
  check(hostname: string, address: string): void;
}

/**
 * The policy of an HTTP tool: public addresses pass; blocked ranges pass only when `allow` lists the host name
 * (exactly, or `*.example.internal` for its subdomains: every address it resolves to is then trusted) or a CIDR
 * range holding the address (`10.1.0.0/16`, `127.0.0.1`, `::1`). Entries are checked at creation (`config.invalid`).
 */
export function addressPolicy(allow: unknown, where: string): AddressPolicy {
  if (allow !== undefined && !Array.isArray(allow)) {
    throw optionError({
      where: where,
      option: 'allow',
      message: `allow must be an array of host names and CIDR ranges`,
    });
  }
  const ranges: AddressRange[] = [];
  const hosts: string[] = [];
  const suffixes: string[] = [];
  for (const entry of (allow ?? []) as unknown[]) {
    const parsed = typeof entry === 'string' ? parseRange(entry) : undefined;
    if (parsed !== undefined) {
      ranges.push(parsed);
      continue;
    }
    if (
      typeof entry !== 'string' ||
      !/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(entry)
    ) {
      throw optionError({
        where: where,
        option: 'allow',
        message: `allow entry ${JSON.stringify(entry)} is neither a host name (such as "api.internal" or "*.corp.example") nor a CIDR range (such as "10.0.0.0/8" or "127.0.0.1")`,
      });
    }
    const name = normaliseHost(entry);
    if (name.startsWith('*.')) suffixes.push(name.slice(1));
    else hosts.push(name);
  }
  const hostAllowed = (hostname: string): boolean => {
    const name = normaliseHost(hostname);
    return hosts.includes(name) || suffixes.some((suffix) => name.endsWith(suffix));
  };
  return {
    check(hostname, address) {
      const bytes = parseAddress(address);
      if (bytes === undefined) {
        throw new KeelError(
          'tool.permission_denied',
          `Refused to connect to ${hostname}: ${address} is not an IP address`,
          {
            data: { host: hostname },
          },
        );
      }
      const label = blockedLabel(bytes);
      if (label === undefined || hostAllowed(hostname)) return;
      const inner = embeddedIpv4(bytes);
      if (
        ranges.some((allowed) => inRange(bytes, allowed) || (inner !== undefined && inRange(inner, allowed)))
      )
        return;
      const shown = formatAddress(bytes);
      throw new KeelError(
        'tool.permission_denied',
        hostname === address || parseAddress(hostname) !== undefined
          ? `Refused to connect to ${shown}: a ${label} address`
          : `Refused to connect to ${hostname}: it resolves to ${shown}, a ${label} address`,
        {
          data: { host: hostname, address: shown, range: label },
          guidance: 'This tool may only reach public internet addresses; do not retry this address',
        },
      );
    },
  };
}

/** A host name in lower case without a trailing dot or URL brackets. */
export function normaliseHost(hostname: string): string {
  const lower = hostname.toLowerCase();
  const unbracketed = lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
  return unbracketed.endsWith('.') ? unbracketed.slice(0, -1) : unbracketed;
}
