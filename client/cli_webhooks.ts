/**
 * The `webhooks` commands of the command-line client (docs/interface.md §11): the
 * admin calls on endpoints, and `webhooks listen`, a local receiver that
 * verifies each delivery with `verifyWebhook` and prints it, for developers.
 * @module
 */

import type { IntentEventType, WebhookAttempt, WebhookEndpoint } from "./mod.ts";
import { verifyWebhook, WebhookVerificationError } from "@intents/protocol/webhook_verify";
import { webhookSecretKey } from "@intents/protocol/webhook_signature";
import { describeEvent } from "./cli_format.ts";
import { type Ctx, requireArg, UsageError } from "./cli_support.ts";

/** `--events a,b` as a list of types (the service refuses unknown ones). */
function eventsOption(text: string | undefined): IntentEventType[] | undefined {
  if (text === undefined) return undefined;
  const types = text.split(",").map((t) => t.trim());
  if (types.some((t) => t === "")) throw new UsageError("--events must list event types, a,b");
  return types as IntentEventType[];
}

function describeAttempt(a: WebhookAttempt): string {
  const outcome = a.error ?? String(a.status);
  return `${a.at}  event ${a.event_id}  attempt ${a.attempt}  ${outcome}  ${a.duration_ms} ms`;
}

/** An endpoint, several lines: what `get` and `add` print. */
export function describeEndpoint(e: WebhookEndpoint): string {
  const status = e.disabled_reason ? `${e.status} (${e.disabled_reason})` : e.status;
  return `webhook ${e.id}  ${status}\n` +
    `  url: ${e.url}\n` +
    (e.description ? `  description: ${e.description}\n` : "") +
    `  events: ${e.events === null ? "every type" : e.events.join(", ")}\n` +
    `  delivers after: ${e.after ?? "the feed's beginning"}\n` +
    `  next event: ${e.next_event ?? "none"}, lag ${e.lag}\n` +
    `  last attempt: ${e.last_attempt ? describeAttempt(e.last_attempt) : "none"}\n`;
}

async function add({ values, args, client, print, io }: Ctx): Promise<void> {
  const url = requireArg(args[0], "URL");
  const created = await client().webhooks.add({
    url,
    events: eventsOption(values.events),
    description: values.description,
  });
  if (!values.json) io.stderr("the secret is shown now and at rotation only: keep it\n");
  print(`${describeEndpoint(created)}  secret: ${created.secret}\n`, created);
}

async function list({ client, print }: Ctx): Promise<void> {
  const items = await client().webhooks.list();
  const lines = items.map((e) => {
    const status = e.disabled_reason ? `disabled (${e.disabled_reason})` : e.status;
    return `${e.id}  ${status.padEnd(8)}  lag ${e.lag}  ${e.url}` +
      `${e.description ? `  (${e.description})` : ""}\n`;
  });
  print(lines.length > 0 ? lines.join("") : "no webhook endpoints\n", { items });
}

async function get({ args, client, print }: Ctx): Promise<void> {
  const endpoint = await client().webhooks.get(requireArg(args[0], "ID"));
  print(describeEndpoint(endpoint), endpoint);
}

async function setStatus(status: "active" | "paused", { args, client, print }: Ctx) {
  const id = requireArg(args[0], "ID");
  const webhooks = client().webhooks;
  const endpoint = status === "paused" ? await webhooks.pause(id) : await webhooks.resume(id);
  print(`webhook ${endpoint.id}: ${endpoint.status}\n`, endpoint);
}

async function remove({ args, client, print }: Ctx): Promise<void> {
  const id = requireArg(args[0], "ID");
  await client().webhooks.remove(id);
  print(`removed webhook ${id}\n`, { id, removed: true });
}

async function rotate({ values, args, client, print, io }: Ctx): Promise<void> {
  const id = requireArg(args[0], "ID");
  let overlapS: number | undefined;
  if (values.overlap !== undefined) {
    overlapS = Number(values.overlap);
    if (!/^[0-9]{1,5}$/.test(values.overlap) || overlapS > 86_400) {
      throw new UsageError("--overlap must be a whole number of seconds from 0 to 86400");
    }
  }
  const secret = await client().webhooks.rotateSecret(id, { overlapS });
  // The secret alone on standard output: SECRET=$(deno task cli webhooks rotate ID).
  if (!values.json) {
    const overlap = overlapS === undefined || overlapS === 86_400 ? "24 hours" : `${overlapS} s`;
    io.stderr(
      overlapS === 0
        ? "the older secrets no longer sign deliveries\n"
        : `the older secrets still sign deliveries for at most ${overlap}\n`,
    );
  }
  print(`${secret}\n`, { secret });
}

async function replay({ values, args, client, print }: Ctx): Promise<void> {
  const id = requireArg(args[0], "ID");
  const after = requireArg(values.after, '--after (an event id, or "start")');
  const endpoint = await client().webhooks.replay(id, after === "start" ? null : after);
  print(
    `webhook ${endpoint.id} delivers again after ${endpoint.after ?? "the feed's beginning"} ` +
      `(next event ${endpoint.next_event ?? "none"}, lag ${endpoint.lag})\n`,
    endpoint,
  );
}

async function attempts({ values, args, client, print }: Ctx): Promise<void> {
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!/^[0-9]+$/.test(values.limit) || limit < 1 || limit > 100) {
      throw new UsageError("--limit must be a whole number from 1 to 100");
    }
  }
  const items = await client().webhooks.attempts(requireArg(args[0], "ID"), { limit });
  const text = items.map((a) => `${describeAttempt(a)}\n`).join("");
  print(text || "no attempts\n", { items });
}

/**
 * `webhooks listen`: a receiver on 127.0.0.1 that verifies each delivery
 * with the secret and prints it (one line, or with `--json` the event as one
 * JSON line), answering 204; a delivery that does not verify is printed to
 * standard error and answered 400, so the service sends it again.
 */
async function listen({ values, io, signal }: Ctx): Promise<void> {
  const port = Number(requireArg(values.port, "--port"));
  if (!/^[0-9]+$/.test(values.port!) || port > 65535) {
    throw new UsageError("--port must be a whole number from 0 to 65535");
  }
  const secret = values.secret ?? io.env("WEBHOOK_SECRET");
  if (!secret) throw new UsageError("--secret (or WEBHOOK_SECRET) is required");
  try {
    webhookSecretKey(secret);
  } catch (error) {
    throw new UsageError(`--secret: ${(error as Error).message}`);
  }
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port,
    signal,
    onListen: ({ port }) => io.stderr(`listening on http://127.0.0.1:${port}\n`),
  }, async (request) => {
    if (request.method !== "POST") return new Response(null, { status: 405 });
    const body = new Uint8Array(await request.arrayBuffer());
    try {
      const { payload } = await verifyWebhook(secret, request.headers, body);
      io.stdout(values.json ? `${new TextDecoder().decode(body)}\n` : describeEvent(payload));
      return new Response(null, { status: 204 });
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      io.stderr(`refused a delivery: ${error.message} (${error.code})\n`);
      return new Response(null, { status: 400 });
    }
  });
  await server.finished;
}

/** The `webhooks` commands by name. */
export const WEBHOOK_COMMANDS: Record<string, (ctx: Ctx) => Promise<void>> = {
  "webhooks add": add,
  "webhooks list": list,
  "webhooks get": get,
  "webhooks pause": (ctx) => setStatus("paused", ctx),
  "webhooks resume": (ctx) => setStatus("active", ctx),
  "webhooks remove": remove,
  "webhooks rotate": rotate,
  "webhooks replay": replay,
  "webhooks attempts": attempts,
  "webhooks listen": listen,
};
