import { describe, expect, it } from 'vitest';
import { addressPolicy, blockedLabel } from './address-policy.js';
import { formatAddress, inRange, parseAddress, parseRange } from './ip-address.js';

describe('parseAddress', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::1', '0:0:0:0:0:0:0:1'],
    ['[::1]', '0:0:0:0:0:0:0:1'],
    ['fe80::1%eth0', 'fe80:0:0:0:0:0:0:1'],
    ['::ffff:127.0.0.1', '0:0:0:0:0:ffff:7f00:1'],
    ['2001:db8:0:1::', '2001:db8:0:1:0:0:0:0'],
    ['fd00:ec2::254', 'fd00:ec2:0:0:0:0:0:254'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
  ])('reads %s', (text, expected) => {
    expect(formatAddress(parseAddress(text)!)).toBe(expected);
  });

  it.each(['localhost', '127.1', '1.2.3.256', '::g', ''])('refuses %j', (text) => {
    expect(parseAddress(text)).toBeUndefined();
  });

  it('matches ranges by prefix, and never across families', () => {
    expect(inRange(parseAddress('10.1.2.3')!, parseRange('10.0.0.0/8')!)).toBe(true);
    expect(inRange(parseAddress('11.0.0.1')!, parseRange('10.0.0.0/8')!)).toBe(false);
    expect(inRange(parseAddress('100.127.255.255')!, parseRange('100.64.0.0/10')!)).toBe(true);
    expect(inRange(parseAddress('100.128.0.0')!, parseRange('100.64.0.0/10')!)).toBe(false);
    expect(inRange(parseAddress('::ffff:10.0.0.1')!, parseRange('10.0.0.0/8')!)).toBe(false);
    expect(parseRange('10.0.0.0/33')).toBeUndefined();
  });
});

describe('blockedLabel', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.1', 'private (RFC 1918)'],
    ['172.31.255.1', 'private (RFC 1918)'],
    ['192.168.1.1', 'private (RFC 1918)'],
    ['100.64.0.1', 'shared address space (CGNAT)'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.10.10', 'link-local'],
    ['0.0.0.0', 'unspecified ("this network")'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['fd12:3456::1', 'unique local (private)'],
    ['fe80::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'cloud metadata'],
    ['64:ff9b::a00:1', 'private (RFC 1918)'],
    ['2002:7f00:1::', 'loopback'],
    ['::127.0.0.1', 'IPv4-compatible (deprecated)'],
  ])('blocks %s (%s)', (address, label) => {
    expect(blockedLabel(parseAddress(address)!)).toBe(label);
  });

  it.each(['93.184.215.14', '1.1.1.1', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '2002:808:808::'])(
    'lets the public address %s through',
    (address) => {
      expect(blockedLabel(parseAddress(address)!)).toBeUndefined();
    },
  );
});

describe('addressPolicy', () => {
  it('refuses a blocked address with tool.permission_denied naming the host, the address and the range', () => {
    const policy = addressPolicy(undefined, 'httpTool "x"');
    expect(() => policy.check('internal.example', '10.0.0.7')).toThrow(
      'Refused to connect to internal.example: it resolves to 10.0.0.7, a private (RFC 1918) address',
    );
  });

  it('lets a CIDR of the allowlist through, also in its IPv4-mapped form', () => {
    const policy = addressPolicy(['10.1.0.0/16', '::1'], 'httpTool "x"');
    expect(() => policy.check('db.internal', '10.1.2.3')).not.toThrow();
    expect(() => policy.check('db.internal', '::ffff:10.1.2.3')).not.toThrow();
    expect(() => policy.check('localhost', '::1')).not.toThrow();
    expect(() => policy.check('db.internal', '10.2.0.1')).toThrow(/private/);
  });

  it('lets an allowed host name through whatever it resolves to, and *. its subdomains only', () => {
    const policy = addressPolicy(['API.internal.', '*.corp.example'], 'httpTool "x"');
    expect(() => policy.check('api.internal', '10.0.0.1')).not.toThrow();
    expect(() => policy.check('billing.corp.example', '192.168.0.9')).not.toThrow();
    expect(() => policy.check('corp.example', '192.168.0.9')).toThrow(/private/);
    expect(() => policy.check('evilcorp.example', '192.168.0.9')).toThrow(/private/);
  });

  it.each([[['not a host!']], [['10.0.0.0/99']], ['127.0.0.1'], [[42]]])(
    'refuses the allowlist %j',
    (allow) => {
      expect(() => addressPolicy(allow, 'httpTool "x"')).toThrow(/allow/);
    },
  );
});
