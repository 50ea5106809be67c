/**
 * Typed calls to the service over `fetch`: submitting intents, approving
 * them, the admin reads, documents, the configuration, and the event feed.
 * @module
 */

import { approvalRequest, type ApprovalSigner, rejectionRequest } from "./approvals.ts";
import { IntentsError } from "./errors.ts";
import { LogApi } from "./log.ts";
import { pause } from "./pause.ts";
import { WebhooksApi } from "./webhook_admin.ts";
import type {
  ApprovalsView,
  DryRun,
  IntentEvent,
  IntentRecord,
  RuntimeConfig,
  VariantABody,
  VariantBBody,
} from "@intents/protocol/types";

export { IntentsError };

/** A submission's body as sent: text and bytes unchanged, so what was signed is what is sent. */
function bodyText(body: VariantABody | VariantBBody | string | Uint8Array): BodyInit {
  return typeof body === "string"
    ? body
    : body instanceof Uint8Array
    ? body as Uint8Array<ArrayBuffer>
    : JSON.stringify(body);
}

/** Options of {@link IntentsClient}. */
export interface ClientOptions {
  /** Base URL, e.g. `http://localhost:8000`. */
  url: string;
  /** Bearer token: the admin token for admin calls; for {@link IntentsClient.events} an events token works too. */
  token?: string;
  /** The `fetch` to call the service with (default: the global one). */
  fetch?: typeof fetch;
}

/** Options of {@link IntentsClient.events}. */
export interface EventsOptions {
  /** Start after this event id; absent: from the beginning of the feed. */
  after?: string;
  /** Ends the iteration (quietly) when aborted. */
  signal?: AbortSignal;
  /** Keep waiting for new events at the end of the feed (default true); false: stop there. */
  follow?: boolean;
  /** Events per request, 1 to 1000 (default 100). */
  limit?: number;
}

/** Options of {@link IntentsClient.approve} and {@link IntentsClient.reject}. */
export interface ApproveOptions {
  /**
   * The intent's approvals view as already read (and shown to the person
   * deciding): it is checked and signed instead of a view read anew.
   */
  view?: ApprovalsView;
}

/** Longest wait of one long-poll, in seconds (the service's maximum). */
const LONG_POLL_S = 30;
/** Pauses before reconnecting after a failure: doubling from the first to the last. */
const RETRY_FIRST_MS = 500;
const RETRY_LAST_MS = 10_000;

/** Typed calls to the service. Every failure is an {@link IntentsError}. */
export class IntentsClient {
  readonly #base: string;
  readonly #token?: string;
  readonly #fetch: typeof fetch;

  /**
   * The webhook admin calls (docs/interface.md §11), with this client's token:
   * `client.webhooks.add({ url })`, `list()`, `get(id)`, `update(id, …)`,
   * `pause(id)`, `resume(id)`, `remove(id)`, `rotateSecret(id)`,
   * `replay(id, after)`, `attempts(id)`.
   */
  readonly webhooks: WebhooksApi = new WebhooksApi((method, path, options = {}) =>
    this.#call(method, options.query ? `${path}?${options.query}` : path, {
      body: options.body,
      type: options.body === undefined ? undefined : "application/json",
      admin: true,
    })
  );

  /**
   * The verifiable log's calls and checks (docs/interface.md §14), with this
   * client's token: `client.log.checkpoint(policy)`, `consistency(older,
   * newer)`, `inclusion(entry, index, checkpoint)`, `proveEntry(entry,
   * policy)`; a `Monitor` follows it.
   */
  readonly log: LogApi = new LogApi((path, signal) =>
    this.#call("GET", path, { admin: true, signal })
  );

  /** A client of the service at `options.url`. */
  constructor(options: ClientOptions) {
    this.#base = options.url.replace(/\/+$/, "");
    this.#token = options.token;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  async #call(
    method: string,
    path: string,
    options: {
      body?: BodyInit;
      type?: string;
      admin?: boolean;
      headers?: HeadersInit;
      signal?: AbortSignal;
    } = {},
  ): Promise<Response> {
    const headers = new Headers(options.headers);
    if (options.type) headers.set("content-type", options.type);
    if (options.admin && this.#token) headers.set("authorization", `Bearer ${this.#token}`);
    let response: Response;
    try {
      response = await this.#fetch(`${this.#base}${path}`, {
        method,
        headers,
        body: options.body,
        signal: options.signal,
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new IntentsError(0, "network", `cannot reach ${this.#base}: ${reason}`);
    }
    if (response.ok) return response;
    let code = "bad_response";
    let message = `HTTP ${response.status}`;
    try {
      const body = await response.json();
      if (typeof body?.code === "string") code = body.code;
      if (typeof body?.message === "string") message = body.message;
    } catch {
      // Not our error body: keep the status line.
    }
    throw new IntentsError(response.status, code, message);
  }

  async #json<T>(
    method: string,
    path: string,
    options: { body?: BodyInit; type?: string; admin?: boolean } = {},
  ): Promise<T> {
    const response = await this.#call(method, path, options);
    return await response.json() as T;
  }

  /**
   * `POST /intents`: the stored record. Accepts a body object, or its exact
   * JSON text or bytes (sent unchanged, so what was signed is what is sent).
   *
   * Resolves for 201 and for 202 alike: the record's `state` says which.
   * `accepted` (201) is final; `pending` (202, under a governed document whose
   * threshold the submission's signatures did not reach) waits for
   * {@link IntentsClient.approve} until `record.approval.expires_at`. Either
   * way the id is taken. Sending the same signed body again is safe: when it
   * was stored before (an answer lost), the service answers 200 with the
   * record as it stands now, which resolves here the same way.
   *
   * @throws {IntentsError} with the server's `code`, e.g. `intent_exists`
   *   (another body took the id), `rate_limited`, `too_many_pending`.
   */
  submit(body: VariantABody | VariantBBody | string | Uint8Array): Promise<IntentRecord> {
    return this.submitOutcome(body).then((outcome) => outcome.record);
  }

  /**
   * `POST /intents`, as {@link IntentsClient.submit}, saying also how the
   * service answered: `created` (201), `pending` (202), or `replayed` (200,
   * `Idempotent-Replayed: true`: this same submission was stored before, and
   * the record is that intent as it stands now).
   *
   * @throws {IntentsError} as {@link IntentsClient.submit}.
   */
  async submitOutcome(
    body: VariantABody | VariantBBody | string | Uint8Array,
  ): Promise<{ record: IntentRecord; outcome: "created" | "pending" | "replayed" }> {
    const response = await this.#call("POST", "/intents", {
      body: bodyText(body),
      type: "application/json",
    });
    const record = await response.json() as IntentRecord;
    const outcome = response.status === 202
      ? "pending"
      : response.headers.get("idempotent-replayed") === "true"
      ? "replayed"
      : "created";
    return { record, outcome };
  }

  /**
   * `POST /intents/dry-run`: what the submission would become, checked as
   * {@link IntentsClient.submit} checks it, stored nowhere: `outcome`
   * (`accepted` or `pending`), the effective quorum and the indices of the
   * document's rules that were true. Takes the same bodies as `submit`.
   *
   * @throws {IntentsError} with the refusal the submission would get, e.g.
   *   `rule_denied`, `rule_error`, `quorum_unreachable`, `signer_not_authorized`.
   */
  async dryRun(body: VariantABody | VariantBBody | string | Uint8Array): Promise<DryRun> {
    const response = await this.#call("POST", "/intents/dry-run", {
      body: bodyText(body),
      type: "application/json",
    });
    return await response.json() as DryRun;
  }

  /** `GET /intents/{id}` (admin). */
  getIntent(id: string): Promise<IntentRecord> {
    return this.#json("GET", `/intents/${encodeURIComponent(id)}`, { admin: true });
  }

  /** `GET /intents` (admin): newest first. */
  listIntents(
    options: { limit?: number; cursor?: string } = {},
  ): Promise<{ items: IntentRecord[]; cursor: string | null }> {
    const query = new URLSearchParams();
    if (options.limit !== undefined) query.set("limit", String(options.limit));
    if (options.cursor) query.set("cursor", options.cursor);
    const suffix = query.size > 0 ? `?${query}` : "";
    return this.#json("GET", `/intents${suffix}`, { admin: true });
  }

  /**
   * `GET /intents/{id}/approvals` (public): for a pending intent, what every
   * approver signs (`signed`, `challenge`) and who has approved; else only
   * its state.
   *
   * @throws {IntentsError} 404 `not_found` unless an intent under a governed document has this id.
   */
  approvals(id: string): Promise<ApprovalsView> {
    return this.#json("GET", `/intents/${encodeURIComponent(id)}/approvals`);
  }

  /**
   * `POST /intents/{id}/approvals` (public): reads the intent's view (unless
   * `options.view` gives it), checks it with {@link approvalRequest} (its
   * `challenge` is SHA-256 of its `signed` object's JCS bytes), has `signer`
   * sign those bytes, and sends the one signature.
   *
   * @param signer makes the one signature member from the request (see
   *   `webAuthnSigner` for a browser passkey).
   * @param options.view the view already read, to sign what was shown.
   * @returns the view after the approval: still `pending`, or `accepted` when
   *   this approval reached the threshold.
   * @throws {IntentsError} with the service's code (`not_pending`,
   *   `signer_not_authorized`, `already_approved`, `already_rejected`,
   *   `invalid_signature`, `not_found`), or `bad_response` when the view does
   *   not hold together (then nothing is signed).
   */
  async approve(
    id: string,
    signer: ApprovalSigner,
    options: ApproveOptions = {},
  ): Promise<ApprovalsView> {
    const request = await approvalRequest(options.view ?? await this.approvals(id));
    const signature = await signer(request);
    return await this.#json("POST", `/intents/${encodeURIComponent(id)}/approvals`, {
      body: JSON.stringify({ signature }),
      type: "application/json",
    });
  }

  /**
   * `POST /intents/{id}/rejections` (public): reads the intent's view (unless
   * `options.view` gives it), checks it with {@link rejectionRequest} (its
   * `reject_challenge` is SHA-256 of `intents:reject:` and the signed
   * object's JCS bytes), has `signer` sign those rejection bytes, and sends
   * the one signature. The intent becomes `rejected` once the keys that have
   * not rejected can no longer reach the threshold.
   *
   * @param signer makes the one signature member from the request (the
   *   approval signers fit: they sign `request.bytes` or `request.challenge`).
   * @param options.view the view already read, to sign what was shown.
   * @returns the view after the rejection: still `pending`, or `rejected`.
   * @throws {IntentsError} with the service's code (`not_pending`,
   *   `signer_not_authorized`, `already_approved`, `already_rejected`,
   *   `invalid_signature`, `not_found`), or `bad_response` when the view does
   *   not hold together (then nothing is signed).
   */
  async reject(
    id: string,
    signer: ApprovalSigner,
    options: ApproveOptions = {},
  ): Promise<ApprovalsView> {
    const request = await rejectionRequest(options.view ?? await this.approvals(id));
    const signature = await signer(request);
    return await this.#json("POST", `/intents/${encodeURIComponent(id)}/rejections`, {
      body: JSON.stringify({ signature }),
      type: "application/json",
    });
  }

  async #addDocument(
    path: string,
    document: Uint8Array | string,
    contentType: string,
  ): Promise<{ id: string; created: boolean }> {
    const body = typeof document === "string" ? document : document as Uint8Array<ArrayBuffer>;
    const response = await this.#call("POST", path, { body, type: contentType, admin: true });
    const { id } = await response.json() as { id: string };
    return { id, created: response.status === 201 };
  }

  async #getDocument(path: string): Promise<{ bytes: Uint8Array; contentType: string }> {
    const response = await this.#call("GET", path);
    return {
      bytes: new Uint8Array(await response.arrayBuffer()),
      contentType: response.headers.get("content-type") ?? "application/octet-stream",
    };
  }

  /**
   * The feed (`GET /events`): every accepted intent and, under governed
   * documents, every step before (`intent.pending`, `intent.approval_added`,
   * `intent.rejection_added`) and the other ends (`intent.rejected`,
   * `intent.expired`), in the service's one order, from `after` on. Follows the feed live by long-polling, and after
   * a network failure or a 5xx reconnects by itself from the last id it
   * yielded, so nothing is missed or repeated. Keep the last id you
   * processed and pass it as `after` to resume after a restart.
   *
   * @throws {IntentsError} for a refusal that retrying cannot mend (401, 400).
   * @example
   * ```ts
   * async function follow(
   *   client: IntentsClient,
   *   lastId: string | undefined,
   *   act: (record: unknown) => Promise<void>,
   *   signal: AbortSignal,
   * ): Promise<void> {
   *   for await (const event of client.events({ after: lastId, signal })) {
   *     if (event.type === "intent.accepted") await act(event.record);
   *     lastId = event.id; // keep it: pass it as `after` after a restart
   *   }
   * }
   * ```
   */
  async *events(options: EventsOptions = {}): AsyncGenerator<IntentEvent> {
    const { signal, follow = true, limit = 100 } = options;
    let after = options.after;
    let retryMs = RETRY_FIRST_MS;
    while (!signal?.aborted) {
      const query = new URLSearchParams({ limit: String(limit) });
      if (after !== undefined) query.set("after", after);
      if (follow) query.set("wait", String(LONG_POLL_S));
      let page: { events: IntentEvent[]; next: string | null };
      try {
        const response = await this.#call("GET", `/events?${query}`, { admin: true, signal });
        page = await response.json();
      } catch (error) {
        if (signal?.aborted) return;
        const retryable = !(error instanceof IntentsError) || error.status === 0 ||
          error.status >= 500 || error.code === "bad_response";
        if (!retryable) throw error;
        await pause(retryMs, signal);
        retryMs = Math.min(RETRY_LAST_MS, retryMs * 2);
        continue;
      }
      retryMs = RETRY_FIRST_MS;
      for (const event of page.events) {
        yield event;
        after = event.id;
      }
      if (!follow && page.events.length === 0) return;
    }
  }

  /** `GET /templates/{id}`: the stored bytes and content type. */
  getTemplate(id: string): Promise<{ bytes: Uint8Array; contentType: string }> {
    return this.#getDocument(`/templates/${encodeURIComponent(id)}`);
  }

  /** `GET /policies/{id}`: the stored bytes and content type. */
  getPolicy(id: string): Promise<{ bytes: Uint8Array; contentType: string }> {
    return this.#getDocument(`/policies/${encodeURIComponent(id)}`);
  }

  /** `GET /healthz`: resolves when the service and its storage answer. */
  health(): Promise<{ status: "ok" }> {
    return this.#json("GET", "/healthz");
  }

  /** `POST /templates` (admin): the content address of the document. */
  addTemplate(
    document: Uint8Array | string,
    contentType = "application/json",
  ): Promise<{ id: string; created: boolean }> {
    return this.#addDocument("/templates", document, contentType);
  }

  /** `POST /policies` (admin): the content address of the document. */
  addPolicy(
    document: Uint8Array | string,
    contentType = "application/json",
  ): Promise<{ id: string; created: boolean }> {
    return this.#addDocument("/policies", document, contentType);
  }

  /** `GET /config` (admin), with its ETag. */
  async getConfig(): Promise<RuntimeConfig & { etag: string | null }> {
    const response = await this.#call("GET", "/config", { admin: true });
    return { ...(await response.json()), etag: response.headers.get("etag") };
  }

  /** `PUT /config` (admin); `ifMatch` makes it conditional. */
  async setConfig(
    url: string,
    options: { ifMatch?: string } = {},
  ): Promise<RuntimeConfig & { etag: string | null }> {
    const headers: HeadersInit = options.ifMatch ? { "if-match": options.ifMatch } : {};
    const response = await this.#call("PUT", "/config", {
      body: JSON.stringify({ evidence_extractor_url: url }),
      type: "application/json",
      admin: true,
      headers,
    });
    return { ...(await response.json()), etag: response.headers.get("etag") };
  }
}
