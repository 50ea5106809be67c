/**
 * What the tests of one delivery attempt share: a signed body, options for a
 * receiver on a loopback address, an injected resolver, and a connector that
 * must not be called.
 */

import {
  type Connector,
  type DeliverOptions,
  type Resolver,
  SocketRules,
} from "../../src/delivery/deliver.ts";
import { deliveryHeaders, newWebhookSecret } from "../../src/webhooks/signing.ts";

export const BODY = JSON.stringify({
  id: "00000000000000000001",
  type: "intent.accepted",
  record: {},
});
export const HEADERS = await deliveryHeaders({
  secrets: [newWebhookSecret()],
  id: "00000000000000000001",
  timestampS: 1_760_000_000,
  body: BODY,
});

/**
 * Options for a delivery to a receiver on a loopback address (private
 * addresses and http: allowed), with socket rules of its own where plain TCP
 * to port 443 is allowed.
 */
export function local(url: string, extra: Partial<DeliverOptions> = {}): DeliverOptions {
  return {
    url,
    sockets: new SocketRules({ deploy: false }),
    headers: HEADERS,
    body: BODY,
    timeoutMs: 5000,
    allowPrivate: true,
    allowHttp: true,
    ...extra,
  };
}

/** A resolver that answers `addresses` for any name, and records the names asked. */
export function resolver(addresses: string[]): Resolver & { asked: string[] } {
  const asked: string[] = [];
  return Object.assign((name: string) => {
    asked.push(name);
    return Promise.resolve(addresses);
  }, { asked });
}

/** A connector that must not be called. */
export const noConnect: Connector = () => Promise.reject(new Error("must not connect"));
