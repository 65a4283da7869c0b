import type { ErrorCode } from './codes.js';

/** What a Node or undici error code means to keel. */
export interface SystemCodeVerdict {
  code: ErrorCode;
  /** Overrides the code's default retryability. */
  retryable?: boolean;
  guidance?: string;
}

const CONNECTION: SystemCodeVerdict = { code: 'network.connection' };
const TIMEOUT: SystemCodeVerdict = { code: 'network.timeout' };
const TLS: SystemCodeVerdict = {
  code: 'network.connection',
  retryable: false,
  guidance: 'The TLS handshake failed: check the certificate chain and the base URL scheme.',
};

/**
 * Node (`libuv`, `net`, `dns`, `tls`) and undici error codes. Transient faults are retryable. Two are not:
 * `ENOTFOUND` means the name does not exist (a wrong base URL; retrying cannot fix it, while `EAI_AGAIN` is the
 * resolver's transient failure), and certificate errors are configuration.
 */
export const SYSTEM_CODES: Readonly<Record<string, SystemCodeVerdict>> = {
  ECONNRESET: CONNECTION,
  ECONNREFUSED: {
    code: 'network.connection',
    guidance: 'Nothing accepted the connection: check the base URL and that the server is running.',
  },
  ECONNABORTED: CONNECTION,
  EPIPE: CONNECTION,
  EHOSTUNREACH: CONNECTION,
  EHOSTDOWN: CONNECTION,
  ENETUNREACH: CONNECTION,
  ENETDOWN: CONNECTION,
  ENETRESET: CONNECTION,
  EADDRNOTAVAIL: CONNECTION,
  EAI_AGAIN: CONNECTION,
  ENOTFOUND: {
    code: 'network.connection',
    retryable: false,
    guidance: 'The host name does not resolve: check the base URL.',
  },
  ERR_STREAM_PREMATURE_CLOSE: CONNECTION,
  ERR_HTTP2_STREAM_ERROR: CONNECTION,
  ERR_HTTP2_SESSION_ERROR: CONNECTION,
  ERR_HTTP2_GOAWAY_SESSION: CONNECTION,
  UND_ERR_SOCKET: CONNECTION,
  UND_ERR_CLOSED: CONNECTION,
  UND_ERR_DESTROYED: CONNECTION,
  ETIMEDOUT: TIMEOUT,
  ESOCKETTIMEDOUT: TIMEOUT,
  ERR_SOCKET_CONNECTION_TIMEOUT: TIMEOUT,
  UND_ERR_CONNECT_TIMEOUT: TIMEOUT,
  UND_ERR_HEADERS_TIMEOUT: TIMEOUT,
  UND_ERR_BODY_TIMEOUT: TIMEOUT,
  ERR_TLS_CERT_ALTNAME_INVALID: TLS,
  CERT_HAS_EXPIRED: TLS,
  DEPTH_ZERO_SELF_SIGNED_CERT: TLS,
  SELF_SIGNED_CERT_IN_CHAIN: TLS,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: TLS,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: TLS,
  ERR_INVALID_URL: {
    code: 'config.invalid',
    guidance: 'The URL is malformed: check the base URL.',
  },
};

/** The verdict for a system code, or undefined when keel does not know it. */
export function verdictForSystemCode(code: string): SystemCodeVerdict | undefined {
  return Object.hasOwn(SYSTEM_CODES, code) ? SYSTEM_CODES[code] : undefined;
}
