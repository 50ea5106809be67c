/**
 * The webhook admin calls of the client library (docs/interface.md §11), reached as
 * `client.webhooks` of an `IntentsClient` holding the admin token:
 * register endpoints, read their state and attempts, pause, resume, rotate
 * their secrets, replay. Receivers verify deliveries with `verifyWebhook`
 * (`webhooks.ts`).
 *
 * @example
 * ```ts
 * import { IntentsClient } from "./mod.ts";
 *
 * async function register(url: string): Promise<string> {
 *   const client = new IntentsClient({ url: "http://localhost:8000", token: "admin-token-0123456789" });
 *   const endpoint = await client.webhooks.add({ url, events: ["intent.accepted"] });
 *   return endpoint.secret; // shown here and at rotation only: keep it where the receiver reads it
 * }
 * ```
 * @module
 */

import type {
  IntentEventType,
  NewWebhookEndpoint,
  WebhookAttempt,
  WebhookEndpoint,
} from "@intents/protocol/types";

/** What `add` sends. */
export interface WebhookEndpointInput {
  /** An absolute https: URL (http: where the service allows it). */
  url: string;
  /** The types to receive; absent or null: every type. */
  events?: IntentEventType[] | null;
  /** At most 200 characters. */
  description?: string;
}

/** What `update` changes: any of these. */
export interface WebhookEndpointChanges extends Partial<WebhookEndpointInput> {
  /** `paused` stops deliveries; `active` resumes a paused or disabled endpoint where it stopped. */
  status?: "active" | "paused";
}

/** How the calls reach the service: the client's own request, with the admin token. */
export type WebhookCall = (
  method: string,
  path: string,
  options?: { body?: string; query?: URLSearchParams },
) => Promise<Response>;

/** The webhook admin calls; every failure is an `IntentsError` with the service's code. */
export class WebhooksApi {
  readonly #call: WebhookCall;

  /**
   * The calls, over one function that sends an admin request.
   *
   * @param call sends one admin request (see `IntentsClient.webhooks`).
   */
  constructor(call: WebhookCall) {
    this.#call = call;
  }

  async #json<T>(method: string, path: string, body?: unknown, query?: URLSearchParams) {
    const response = await this.#call(method, path, {
      body: body === undefined ? undefined : JSON.stringify(body),
      query,
    });
    return await response.json() as T;
  }

  /**
   * `POST /webhooks`: registers an endpoint, which receives the events after
   * the feed's head from now on.
   *
   * @throws {IntentsError} `invalid_webhook_url`, `too_many_webhooks`, `invalid_body`.
   */
  add(input: WebhookEndpointInput): Promise<NewWebhookEndpoint> {
    return this.#json("POST", "/webhooks", input);
  }

  /** `GET /webhooks`: every endpoint, oldest first. */
  async list(): Promise<WebhookEndpoint[]> {
    return (await this.#json<{ items: WebhookEndpoint[] }>("GET", "/webhooks")).items;
  }

  /** `GET /webhooks/{id}`: its status, next event, lag and last attempt. */
  get(id: string): Promise<WebhookEndpoint> {
    return this.#json("GET", path(id));
  }

  /** `PATCH /webhooks/{id}`. */
  update(id: string, changes: WebhookEndpointChanges): Promise<WebhookEndpoint> {
    return this.#json("PATCH", path(id), changes);
  }

  /** Stops an endpoint's deliveries until {@link resume}. */
  pause(id: string): Promise<WebhookEndpoint> {
    return this.update(id, { status: "paused" });
  }

  /** Resumes a paused or disabled endpoint where it stopped: the waiting event is tried at once. */
  resume(id: string): Promise<WebhookEndpoint> {
    return this.update(id, { status: "active" });
  }

  /** `DELETE /webhooks/{id}`. */
  async remove(id: string): Promise<void> {
    const response = await this.#call("DELETE", path(id));
    await response.body?.cancel();
  }

  /**
   * `POST /webhooks/{id}/secret`: the new secret. Every older secret still
   * signs for at most `overlapS` seconds more (0–86400; default 86400, a
   * day); 0 retires them at once, on every process, by the time this returns
   * (a secret that leaked).
   *
   * @throws {IntentsError} `invalid_body` for an `overlapS` out of range.
   */
  async rotateSecret(id: string, options: { overlapS?: number } = {}): Promise<string> {
    const body = options.overlapS === undefined ? undefined : { overlap_s: options.overlapS };
    return (await this.#json<{ secret: string }>("POST", `${path(id)}/secret`, body)).secret;
  }

  /**
   * `POST /webhooks/{id}/replay`: deliveries start again after `after`
   * (null: from the feed's beginning).
   */
  replay(id: string, after: string | null): Promise<WebhookEndpoint> {
    return this.#json("POST", `${path(id)}/replay`, { after });
  }

  /** `GET /webhooks/{id}/attempts`: the latest attempts (1–100, default 20), newest first. */
  async attempts(id: string, options: { limit?: number } = {}): Promise<WebhookAttempt[]> {
    const query = options.limit === undefined
      ? undefined
      : new URLSearchParams({ limit: String(options.limit) });
    const page = await this.#json<{ items: WebhookAttempt[] }>(
      "GET",
      `${path(id)}/attempts`,
      undefined,
      query,
    );
    return page.items;
  }
}

function path(id: string): string {
  return `/webhooks/${encodeURIComponent(id)}`;
}
