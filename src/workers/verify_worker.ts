/**
 * A worker thread of the verification pool: reads the bodies it is sent, and
 * verifies each on `go`, or at once when the gate cannot refuse it
 * (`verify_messages.ts`); what it settled in one turn of its event loop goes
 * in one message. It holds no store and no secret, only caches of its own.
 * @module
 */

/// <reference lib="deno.worker" />

import { setImmediate } from "node:timers";
import { ServiceError } from "../errors.ts";
import {
  type ReadSubmission,
  readSubmissionBody,
  verifyRead,
} from "../domain/verify_submission.ts";
import { type VerifyContext, verifyContext } from "../domain/authorship.ts";
import { ClockCache } from "../clock_cache.ts";
import type { InitMessage, Outcome, WorkMessage } from "./verify_messages.ts";
import { type TraceParent, verifyInSpan } from "./verify_span.ts";
import { flushSpans } from "../telemetry/tracing.ts";

/** Documents a worker remembers as existing: many more than a service uses at once. */
const KNOWN_DOCUMENTS = 1024;

/** This thread's state: its context, the bodies read and held, what it knows, what waits to go. */
const thread: {
  ctx?: VerifyContext;
  workCharged: boolean;
  held: Map<number, { read: ReadSubmission; parent?: TraceParent }>;
  known: ClockCache<true>;
  ready: Outcome[];
} = { workCharged: true, held: new Map(), known: new ClockCache(KNOWN_DOCUMENTS), ready: [] };

function refusal(id: number, error: unknown): Outcome {
  if (error instanceof ServiceError) {
    return { id, refused: { code: error.code, message: error.message } };
  }
  return { id, fault: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
}

/** Outcomes settled in one turn of the event loop go in one message. */
function send(outcome: Outcome): void {
  thread.ready.push(outcome);
  if (thread.ready.length > 1) return;
  setImmediate(() => {
    const outcomes = thread.ready;
    thread.ready = [];
    // Their spans go to the runtime first: a worker may be stopped once it has answered.
    flushSpans();
    self.postMessage(outcomes);
  });
}

function documentKey(read: ReadSubmission): string {
  return `${read.summary.submission.refKind}:${read.summary.submission.refId}`;
}

async function verify(
  ctx: VerifyContext,
  id: number,
  held: { read: ReadSubmission; parent?: TraceParent },
  early: boolean,
) {
  const { read, parent } = held;
  try {
    // A span of this thread, the child of the request's (when tracing).
    const verified = await verifyInSpan(() => verifyRead(ctx, read), { parent, thread: "worker" });
    return early ? { id, verified, summary: read.summary } : { id, verified };
  } catch (error) {
    return refusal(id, error);
  }
}

/** Reads one body; verifies it at once when the serving thread's gate cannot refuse it. */
function start(ctx: VerifyContext, id: number, bytes: Uint8Array, parent?: TraceParent): void {
  let read: ReadSubmission;
  try {
    read = readSubmissionBody(ctx, bytes);
  } catch (error) {
    send(refusal(id, error));
    return;
  }
  const { summary } = read;
  const free = !summary.signed ||
    ((summary.work <= 1 || !thread.workCharged) && thread.known.get(documentKey(read)));
  if (free) {
    // Each answer goes as soon as it is ready: a slow passkey check holds back no Ed25519 one.
    verify(ctx, id, { read, parent }, true).then(send);
    return;
  }
  thread.held.set(id, { read, parent });
  send({ id, read: summary });
}

self.onmessage = (event: MessageEvent<InitMessage | WorkMessage>) => {
  const message = event.data;
  if (message.type === "init") {
    thread.ctx = verifyContext(message.passkey);
    thread.workCharged = message.workCharged;
    return;
  }
  const ctx = thread.ctx;
  if (ctx === undefined) throw new Error("verify worker: work before its settings");
  for (const id of message.drop) thread.held.delete(id);
  for (const id of message.go) {
    const held = thread.held.get(id);
    if (held === undefined) {
      // Not the request's fault: the pool answers it on its own thread.
      send({ id, fault: "a decision on a body this worker does not hold" });
      continue;
    }
    thread.held.delete(id);
    // Its gate passed: the document exists, and documents are never removed.
    thread.known.set(documentKey(held.read), true);
    verify(ctx, id, held, false).then(send);
  }
  for (const { id, bytes, parent } of message.jobs) start(ctx, id, bytes, parent);
};
