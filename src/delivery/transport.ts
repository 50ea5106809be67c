/**
 * How a delivery attempt reaches its endpoint once the name is resolved and
 * every address judged (docs/interface.md §11): pinned (TCP to a judged
 * address, then TLS checked against the URL's name) wherever the runtime
 * allows plain TCP to the port, else by name (`Deno.connectTls`, the peer's
 * address judged before a byte of the request is written). Why two paths,
 * and why `Deno.startTls`: docs/decisions.md.
 * @module
 */

import { judgeAddress } from "../webhooks/addresses.ts";
import { closeQuietly, type Deadline } from "./_deadline.ts";

/** Resolves a host name to IP address literals (all of them: A and AAAA). */
export type Resolver = (hostname: string, options: { signal: AbortSignal }) => Promise<string[]>;

/** Opens a TCP connection to an IP address literal. */
export type Connector = (options: {
  hostname: string;
  port: number;
  signal: AbortSignal;
}) => Promise<Deno.TcpConn>;

/**
 * What a process knows of its runtime's rule on sockets: whether plain TCP
 * to port 443 is allowed. Refused from the start on Deno Deploy
 * (`DENO_DEPLOY=true`); elsewhere allowed until the runtime refuses it
 * once, which is then remembered for the life of the process.
 */
export class SocketRules {
  #tcpTo443: boolean;

  /** @param options `deploy`: `DENO_DEPLOY=true`, plain TCP to port 443 is refused there. */
  constructor(options: { deploy: boolean }) {
    this.#tcpTo443 = !options.deploy;
  }

  /** Whether a plain TCP connection to port 443 may be tried. */
  get tcpTo443(): boolean {
    return this.#tcpTo443;
  }

  /** The runtime refused a plain TCP connection to port 443: none is tried again. */
  refuseTcpTo443(): void {
    this.#tcpTo443 = false;
  }
}

/** An attempt refused because an address it reached is not globally reachable. */
export class RefusedAddress extends Error {
  constructor(readonly address: string) {
    super(`${address} is not globally reachable`);
  }
}

/** Where and how to connect. */
export interface Target {
  url: URL;
  /** The URL's host without brackets: a name, or an IP address literal. */
  host: string;
  /** What the host resolved to, every one judged (unless `allowPrivate`). */
  addresses: readonly string[];
  allowPrivate: boolean;
  sockets: SocketRules;
  caCerts?: string[];
  connect?: Connector;
}

/**
 * Opens a connection to the target (TLS for https, checked against the
 * URL's name) on the path the runtime allows, or null when no address
 * accepted one. The address connected to is told to `connected` as soon
 * as it is known.
 *
 * @throws {RefusedAddress} when the by-name path reached an address that is
 *   not globally reachable (the connection is closed).
 * @throws when the deadline passes, or TLS fails (the connection is closed).
 */
export async function openConnection(
  target: Target,
  deadline: Deadline,
  connected: (address: string) => void,
): Promise<Deno.Conn | null> {
  const https = target.url.protocol === "https:";
  const port = Number(target.url.port) || (https ? 443 : 80);
  if (https && port === 443 && !target.sockets.tcpTo443) {
    return await openByName(target, port, deadline, connected);
  }
  try {
    return await openPinned(target, port, deadline, connected);
  } catch (error) {
    if (!(error instanceof PlainTcpRefused)) throw error;
    target.sockets.refuseTcpTo443();
    if (!https) return null;
    return await openByName(target, port, deadline, connected);
  }
}

/** The runtime refused plain TCP to port 443 (not the peer: no connection was tried). */
class PlainTcpRefused extends Error {}

/**
 * Whether a failed `Deno.connect` to port 443 is the runtime's refusal:
 * Deno Deploy's error names `Deno.connectTls`; a permission error is taken
 * for the same rule.
 */
function refusedByRuntime(error: unknown): boolean {
  return error instanceof Deno.errors.PermissionDenied ||
    error instanceof Deno.errors.NotCapable ||
    (error instanceof Error && error.message.includes("connectTls"));
}

/** The pinned path: TCP to the first judged address that accepts, then TLS by name. */
async function openPinned(
  target: Target,
  port: number,
  deadline: Deadline,
  connected: (address: string) => void,
): Promise<Deno.Conn | null> {
  const connect = target.connect ?? connectTcp;
  let tcp: Deno.TcpConn | null = null;
  for (const candidate of target.addresses) {
    try {
      tcp = await deadline.settle(connect({ hostname: candidate, port, signal: deadline.signal }));
      connected(candidate);
      break;
    } catch (error) {
      if (deadline.signal.aborted) throw error;
      if (port === 443 && refusedByRuntime(error)) throw new PlainTcpRefused();
    }
  }
  if (tcp === null) return null;
  // Nagle's algorithm would hold the TLS handshake's last flight for the peer's delayed
  // ACK (40 ms on Linux): every message here is complete when written.
  tcp.setNoDelay(true);
  if (target.url.protocol !== "https:") return tcp;
  const closeOnAbort = () => closeQuietly(tcp);
  deadline.signal.addEventListener("abort", closeOnAbort, { once: true });
  try {
    const tls = await deadline.settle(Deno.startTls(tcp, {
      hostname: target.host, // the certificate is checked against the URL's name, not the address
      caCerts: target.caCerts,
      alpnProtocols: ["http/1.1"],
      unsafelyDisableHostnameVerification: false,
    }));
    return await handshake(tls, deadline);
  } catch (error) {
    closeQuietly(tcp);
    throw error;
  } finally {
    deadline.signal.removeEventListener("abort", closeOnAbort);
  }
}

/** The by-name path: TLS to the name, the peer's address judged before anything is written. */
async function openByName(
  target: Target,
  port: number,
  deadline: Deadline,
  connected: (address: string) => void,
): Promise<Deno.Conn> {
  const tls = await deadline.settle(Deno.connectTls({
    hostname: target.host,
    port,
    caCerts: target.caCerts,
    alpnProtocols: ["http/1.1"],
    unsafelyDisableHostnameVerification: false,
  }));
  const closeOnAbort = () => closeQuietly(tls);
  deadline.signal.addEventListener("abort", closeOnAbort, { once: true });
  try {
    const address = tls.remoteAddr.hostname;
    connected(address);
    if (!target.allowPrivate && !judgeAddress(address).globallyReachable) {
      throw new RefusedAddress(address);
    }
    return await handshake(tls, deadline);
  } catch (error) {
    closeQuietly(tls);
    throw error;
  } finally {
    deadline.signal.removeEventListener("abort", closeOnAbort);
  }
}

/** Completes the TLS handshake within the deadline: the certificate is checked here. */
async function handshake(tls: Deno.TlsConn, deadline: Deadline): Promise<Deno.TlsConn> {
  try {
    await deadline.race(tls.handshake());
  } catch (error) {
    closeQuietly(tls);
    throw error;
  }
  return tls;
}

/**
 * Resolves a name to all its IPv4 and IPv6 addresses with `Deno.resolveDns`
 * (A and AAAA, each following CNAMEs). A type with no records adds none.
 *
 * @throws the resolver's error when a lookup fails otherwise (no server, a
 *   server failure): an attempt must not go on with half an answer hiding the
 *   other half.
 */
export async function resolveHost(
  hostname: string,
  options: { signal?: AbortSignal } = {},
): Promise<string[]> {
  const lookups = await Promise.allSettled(
    (["A", "AAAA"] as const).map((type) =>
      Deno.resolveDns(hostname, type, { signal: options.signal })
    ),
  );
  const addresses: string[] = [];
  for (const lookup of lookups) {
    if (lookup.status === "fulfilled") addresses.push(...lookup.value);
    else if (!(lookup.reason instanceof Deno.errors.NotFound)) throw lookup.reason;
  }
  return addresses;
}

function connectTcp(options: { hostname: string; port: number; signal: AbortSignal }) {
  return Deno.connect({ ...options, transport: "tcp" });
}
