import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { KeelError } from '@keel/core';
import type { AddressPolicy } from './address-policy.js';

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to its addresses, such as `(name) => [{ address: '10.0.0.5', family: 4 }]` in a test. */
export type HostResolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The system resolver (getaddrinfo: `/etc/hosts`, then DNS), every address in the order the system gives. */
export const systemResolver: HostResolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => ({
    address: entry.address,
    family: entry.family === 6 ? 6 : 4,
  }));

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** The shape of the `lookup` option Node's `net.connect` calls. */
export type SocketLookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/**
 * A `lookup` for Node's sockets that resolves a name once and checks every address against `policy` before the
 * socket connects: the socket then connects to an address that was checked, so a DNS answer that changes between a
 * check and the connection (rebinding) cannot slip through. A name with any refused address is refused as a whole,
 * even if others are public. The refusal reaches the request as its error, a `tool.permission_denied` KeelError.
 */
export function guardedLookup(policy: AddressPolicy, resolve: HostResolver): SocketLookup {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (found) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
        const addresses = found.filter((entry) => wanted === undefined || entry.family === wanted);
        if (addresses.length === 0) {
          const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
            code: 'ENOTFOUND',
            hostname,
          });
          callback(error, '');
          return;
        }
        try {
          for (const entry of addresses) policy.check(hostname, entry.address);
        } catch (error) {
          callback(error as KeelError & NodeJS.ErrnoException, '');
          return;
        }
        if (options.all === true)
          callback(
            null,
            addresses.map((entry) => ({ ...entry })),
          );
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: unknown) => {
        callback(error instanceof Error ? error : new Error(String(error)), '');
      },
    );
  };
}
