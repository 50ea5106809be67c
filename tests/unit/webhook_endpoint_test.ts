/**
 * Unit tests of what admin calls and attempts make of a webhook endpoint
 * (`src/webhooks/endpoint.ts`): the retry schedule of docs/interface.md §11, with
 * `Retry-After` and 410, resumption, replay, secret rotation and rendering.
 */

import assert from "node:assert/strict";
import {
  afterAttempt,
  attemptNumber,
  type AttemptRecord,
  type Endpoint,
  isEndpointId,
  judgeAttempt,
  MAX_SECRETS,
  newEndpoint,
  newEndpointId,
  renderEndpoint,
  REPLACED_SECRET_MS,
  replayEndpoint,
  rotateSecret,
  secretsInForce,
  skipTo,
  updateEndpoint,
  wants,
} from "../../src/webhooks/endpoint.ts";
import { WEBHOOK_RETRY_SCHEDULE_MS } from "../../src/settings.ts";

const T0 = Date.UTC(2026, 0, 1);

function endpoint(extra: Partial<Endpoint> = {}): Endpoint {
  return {
    ...newEndpoint({
      id: newEndpointId(T0),
      url: "https://hooks.example/in",
      events: null,
      description: "",
      secret: "whsec_first",
      head: 10,
      now: new Date(T0),
    }),
    ...extra,
  };
}

/** An attempt of the event at `position` that got `status` (or failed with `error`). */
function attempt(
  e: Endpoint,
  position: number,
  status: number | null,
  options: { error?: AttemptRecord["error"]; retryAfterS?: number; at?: number } = {},
): Endpoint {
  const record: AttemptRecord = {
    eventId: String(position),
    attempt: attemptNumber(e, position),
    at: new Date(options.at ?? T0).toISOString(),
    status,
    error: options.error ?? null,
    durationMs: 5,
  };
  return afterAttempt(e, {
    position,
    record,
    retryAfterS: options.retryAfterS,
    endedAt: options.at ?? T0,
    schedule: WEBHOOK_RETRY_SCHEDULE_MS,
  });
}

Deno.test("a new endpoint delivers after the head, with one secret, active", () => {
  const e = endpoint();
  assert.equal(e.position, 10);
  assert.equal(e.status, "active");
  assert.deepEqual(secretsInForce(e, T0), ["whsec_first"]);
  assert.ok(isEndpointId(e.id));
  assert.ok(!isEndpointId("wh_0"), "too short");
  assert.ok(!isEndpointId(e.id.toUpperCase()));
  // Ids sort by creation time.
  assert.ok(newEndpointId(T0) < newEndpointId(T0 + 1));
});

Deno.test("only a 2xx answer without error acknowledges; 410 is gone; all else failed", () => {
  assert.equal(judgeAttempt({ status: 200, error: null }), "acknowledged");
  assert.equal(judgeAttempt({ status: 299, error: null }), "acknowledged");
  assert.equal(judgeAttempt({ status: 410, error: null }), "gone");
  for (const status of [100, 199, 300, 301, 400, 404, 429, 500, 503]) {
    assert.equal(judgeAttempt({ status, error: status < 400 ? "redirect" : null }), "failed");
  }
  assert.equal(judgeAttempt({ status: null, error: "timeout" }), "failed");
});

Deno.test("an acknowledgement moves the endpoint past the event and logs the attempt", () => {
  const e = attempt(endpoint(), 12, 204);
  assert.equal(e.position, 12);
  assert.equal(e.attempts, 1);
  assert.equal(e.lastAttempt?.status, 204);
  assert.deepEqual([e.retrying, e.failures, e.retryAt], [null, 0, null]);
});

Deno.test("failures follow §11's schedule, and the failure after the last retry disables", () => {
  let e = endpoint();
  const delays: number[] = [];
  for (let k = 1; k <= 7; k++) {
    const at = T0 + k * 1000;
    e = attempt(e, 11, 500, { at });
    assert.equal(e.lastAttempt?.attempt, k);
    assert.equal(e.status, "active");
    assert.equal(e.position, 10, "the endpoint does not move past an event that failed");
    delays.push(e.retryAt! - at);
  }
  assert.deepEqual(delays, [...WEBHOOK_RETRY_SCHEDULE_MS]);
  e = attempt(e, 11, null, { error: "timeout" });
  assert.equal(e.lastAttempt?.attempt, 8);
  assert.deepEqual([e.status, e.disabledReason, e.position], ["disabled", "failing", 10]);
  assert.equal(e.attempts, 8);
});

Deno.test("a Retry-After on a 429 or 503 replaces the next delay, on other statuses not", () => {
  for (const status of [429, 503]) {
    const e = attempt(endpoint(), 11, status, { retryAfterS: 1800 });
    assert.equal(e.retryAt! - T0, 1_800_000, String(status));
  }
  const plain = attempt(endpoint(), 11, 500, { retryAfterS: 1800 });
  assert.equal(plain.retryAt! - T0, WEBHOOK_RETRY_SCHEDULE_MS[0]);
  // The replacement is for one delay: a later failure without it is back on the schedule.
  const again = attempt(attempt(endpoint(), 11, 429, { retryAfterS: 1 }), 11, 500);
  assert.equal(again.retryAt! - T0, WEBHOOK_RETRY_SCHEDULE_MS[1]);
});

Deno.test("a 410 disables the endpoint at once (gone), on any attempt", () => {
  const e = attempt(attempt(endpoint(), 11, 500), 11, 410);
  assert.deepEqual([e.status, e.disabledReason, e.position, e.retryAt], [
    "disabled",
    "gone",
    10,
    null,
  ]);
});

Deno.test("resuming a paused or disabled endpoint tries the waiting event at once, on a fresh schedule", () => {
  const failing = attempt(attempt(endpoint(), 11, 500), 11, 500);
  const paused = updateEndpoint(failing, { status: "paused" });
  assert.equal(paused.status, "paused");
  for (const stopped of [paused, attempt(failing, 11, 410)]) {
    const resumed = updateEndpoint(stopped, { status: "active" });
    assert.deepEqual(
      [resumed.status, resumed.disabledReason, resumed.retryAt, resumed.failures, resumed.position],
      ["active", null, null, 0, 10],
    );
    assert.equal(attemptNumber(resumed, 11), 1);
  }
  // Setting active on an active endpoint leaves its retry state as it is.
  assert.deepEqual(updateEndpoint(failing, { status: "active" }), failing);
});

Deno.test("a new URL is tried at once; events and description change alone", () => {
  const failing = attempt(endpoint(), 11, 500);
  const moved = updateEndpoint(failing, { url: "https://other.example/in" });
  assert.deepEqual([moved.url, moved.retryAt, moved.failures], [
    "https://other.example/in",
    null,
    0,
  ]);
  const same = updateEndpoint(failing, { url: failing.url, description: "x", events: null });
  assert.deepEqual([same.retryAt, same.description], [failing.retryAt, "x"]);
  const typed = updateEndpoint(failing, { events: ["intent.expired"] });
  assert.ok(wants(typed, "intent.expired"));
  assert.ok(!wants(typed, "intent.accepted"));
  assert.ok(wants(endpoint(), "intent.some_future_type"), "null receives every type");
});

Deno.test("a replay moves the cursor either way and starts a fresh schedule; the status stays", () => {
  const paused = updateEndpoint(attempt(endpoint(), 11, 500), { status: "paused" });
  const replayed = replayEndpoint(paused, 3);
  assert.deepEqual([replayed.position, replayed.retryAt, replayed.status], [3, null, "paused"]);
  assert.equal(replayEndpoint(endpoint(), 0).position, 0);
  assert.equal(skipTo(endpoint(), 40).position, 40);
  assert.equal(skipTo(endpoint(), 4).position, 10, "skipping never moves back");
});

Deno.test("a rotated secret signs first; the one replaced stays in force for 24 hours", () => {
  const e = rotateSecret(endpoint(), "whsec_second", T0);
  assert.deepEqual(secretsInForce(e, T0), ["whsec_second", "whsec_first"]);
  assert.deepEqual(secretsInForce(e, T0 + REPLACED_SECRET_MS - 1), ["whsec_second", "whsec_first"]);
  assert.deepEqual(secretsInForce(e, T0 + REPLACED_SECRET_MS), ["whsec_second"]);
  // A second rotation keeps the first replaced secret's own end, and drops expired ones.
  const twice = rotateSecret(e, "whsec_third", T0 + 1000);
  assert.deepEqual(twice.secrets.map((s) => [s.secret, s.expiresAt]), [
    ["whsec_third", null],
    ["whsec_second", T0 + 1000 + REPLACED_SECRET_MS],
    ["whsec_first", T0 + REPLACED_SECRET_MS],
  ]);
  const later = rotateSecret(twice, "whsec_fourth", T0 + REPLACED_SECRET_MS);
  assert.deepEqual(later.secrets.map((s) => s.secret), [
    "whsec_fourth",
    "whsec_third",
    "whsec_second",
  ]);
  let many = endpoint();
  for (let i = 0; i < 50; i++) many = rotateSecret(many, `whsec_${i}`, T0 + i);
  assert.equal(many.secrets.length, MAX_SECRETS);
  assert.equal(many.secrets[0].secret, "whsec_49");
});

Deno.test("an overlap bounds every older secret, never extends one, and 0 retires them all", () => {
  const HOUR = 3_600_000;
  const e = endpoint({
    secrets: [
      { secret: "whsec_third", expiresAt: null },
      { secret: "whsec_second", expiresAt: T0 + 20 * HOUR },
      { secret: "whsec_first", expiresAt: T0 + 2 * HOUR },
    ],
  });
  const ends = (x: Endpoint) => x.secrets.map((s) => [s.secret, s.expiresAt]);
  // An hour: the current secret and the one with 20 h left get an hour; 2 h become 1 h.
  assert.deepEqual(ends(rotateSecret(e, "whsec_fourth", T0, HOUR)), [
    ["whsec_fourth", null],
    ["whsec_third", T0 + HOUR],
    ["whsec_second", T0 + HOUR],
    ["whsec_first", T0 + HOUR],
  ]);
  // A day (the default) extends none: each keeps the sooner of its end and the overlap's.
  assert.deepEqual(ends(rotateSecret(e, "whsec_fourth", T0)), [
    ["whsec_fourth", null],
    ["whsec_third", T0 + REPLACED_SECRET_MS],
    ["whsec_second", T0 + 20 * HOUR],
    ["whsec_first", T0 + 2 * HOUR],
  ]);
  // 0: only the new secret is left, whatever clock a deliverer reads it with.
  const leaked = rotateSecret(e, "whsec_fourth", T0, 0);
  assert.deepEqual(leaked.secrets, [{ secret: "whsec_fourth", expiresAt: null }]);
  assert.deepEqual(secretsInForce(leaked, T0 - HOUR), ["whsec_fourth"]);
});

Deno.test("the rendered endpoint: after, next event, lag, disabled reason, no secrets", () => {
  const e = attempt(endpoint(), 12, 204);
  const shown = renderEndpoint(e, { head: 20, nextEvent: 14 });
  assert.deepEqual(shown, {
    id: e.id,
    url: e.url,
    events: null,
    description: "",
    status: "active",
    created_at: new Date(T0).toISOString(),
    after: "12",
    next_event: "14",
    lag: 8,
    last_attempt: {
      event_id: "12",
      attempt: 1,
      at: new Date(T0).toISOString(),
      status: 204,
      error: null,
      duration_ms: 5,
    },
  });
  const gone = renderEndpoint(attempt(e, 13, 410), { head: 20, nextEvent: 13 });
  assert.equal(gone.disabled_reason, "gone");
  const fresh = renderEndpoint(endpoint({ position: 0 }), { head: 0, nextEvent: null });
  assert.deepEqual([fresh.after, fresh.next_event, fresh.lag], [null, null, 0]);
});
