import { isIPv4, isIPv6 } from 'node:net';

/** An IP address as its bytes: 4 for IPv4, 16 for IPv6. */
export type AddressBytes = Uint8Array;

/** A CIDR range: a network's bytes and the length of its prefix in bits. */
export interface AddressRange {
  readonly bytes: AddressBytes;
  readonly prefixBits: number;
}

/**
 * The bytes of an IPv4 or IPv6 address in text form, or undefined when `text` is not one. A zone (`fe80::1%eth0`)
 * and the brackets of a URL host (`[::1]`) are accepted and dropped.
 */
export function parseAddress(text: string): AddressBytes | undefined {
  let address = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = address.indexOf('%');
  if (zone !== -1) address = address.slice(0, zone);
  if (isIPv4(address)) return Uint8Array.from(address.split('.').map(Number));
  if (!isIPv6(address)) return undefined;
  // An IPv4 tail (::ffff:127.0.0.1) is the last two groups written in dotted form.
  const lastColon = address.lastIndexOf(':');
  const tail = address.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a, b, c, d] = tail.split('.').map(Number) as [number, number, number, number];
    address = `${address.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const bytes = new Uint8Array(16);
  const [headText = '', restText] = address.split('::');
  const head = headText === '' ? [] : headText.split(':');
  const rest = restText === undefined || restText === '' ? [] : restText.split(':');
  for (const [index, group] of head.entries()) writeGroup(bytes, index * 2, group);
  for (const [index, group] of rest.entries()) writeGroup(bytes, 16 - (rest.length - index) * 2, group);
  return bytes;
}

function writeGroup(bytes: AddressBytes, offset: number, group: string): void {
  const value = Number.parseInt(group, 16);
  bytes[offset] = value >> 8;
  bytes[offset + 1] = value & 0xff;
}

/** Parses `address/prefix` (or a bare address, a range of one), or undefined when `text` is neither. */
export function parseRange(text: string): AddressRange | undefined {
  const slash = text.indexOf('/');
  const bytes = parseAddress(slash === -1 ? text : text.slice(0, slash));
  if (bytes === undefined) return undefined;
  const maximum = bytes.length * 8;
  if (slash === -1) return { bytes, prefixBits: maximum };
  const prefixText = text.slice(slash + 1);
  const prefixBits = Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText) || prefixBits > maximum) return undefined;
  return { bytes, prefixBits };
}

/** Whether `address` lies in `range` (an IPv4 address is never in an IPv6 range, nor the reverse). */
export function inRange(address: AddressBytes, range: AddressRange): boolean {
  if (address.length !== range.bytes.length) return false;
  let bits = range.prefixBits;
  for (let index = 0; bits > 0; index++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((address[index]! & mask) !== (range.bytes[index]! & mask)) return false;
  }
  return true;
}

/** An address as text: dotted IPv4, or IPv6 groups in hexadecimal (not compressed). */
export function formatAddress(address: AddressBytes): string {
  if (address.length === 4) return address.join('.');
  const groups: string[] = [];
  for (let index = 0; index < 16; index += 2)
    groups.push(((address[index]! << 8) | address[index + 1]!).toString(16));
  return groups.join(':');
}
