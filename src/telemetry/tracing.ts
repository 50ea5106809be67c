/**
 * The service's spans (docs/interface.md §13), through `npm:@opentelemetry/api`,
 * whose SDK the runtime provides when `OTEL_DENO=true`. Without it
 * {@link TRACING} is false and every helper returns at once, allocating
 * nothing. Attributes say what happened, never a secret, a signature, a
 * token, a body or a URL (a webhook URL may carry a credential).
 *
 * The serving path's spans end through {@link endSpan}, in batches: a span
 * handed to the runtime on its own nearly always wakes its exporter thread,
 * which under load costs about as much as the span. So an end time is read
 * when the span ends, and the spans go to the runtime together within 100 ms.
 * @module
 */

import {
  type Attributes,
  type Context,
  context,
  type Link,
  ProxyTracerProvider,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";

export { SpanStatusCode };
export type { Attributes, Span, SpanContext };

/** The service's tracer: the runtime's when telemetry is on, a no-op otherwise. */
const tracer = trace.getTracer("intents");

/**
 * True when the runtime traces (`OTEL_DENO=true`): it registered its tracer
 * provider with the API before any module ran. Otherwise the API answers
 * with its own proxy, whose spans record nothing.
 */
export const TRACING: boolean = !(trace.getTracerProvider() instanceof ProxyTracerProvider);

/** The active span (a request's server span, or one of the service's), when tracing. */
export function activeSpan(): Span | undefined {
  return TRACING ? trace.getActiveSpan() : undefined;
}

/** Options of {@link startSpan}. */
export interface SpanOptions {
  attributes?: Attributes;
  /** Spans this one is linked to (a group commit's, to the waits it serves). */
  links?: Link[];
  /** A span of its own trace, whatever span is active (work for several requests). */
  root?: boolean;
  /** The parent, when not the active span (another thread's, from its message). */
  parent?: SpanContext;
  /** `client` for an outgoing request (a webhook delivery attempt); default internal. */
  kind?: "client" | "internal";
  /** When it started, on the clock of {@link spanTime}; default now, on the runtime's. */
  startTime?: number;
}

/**
 * Starts a span, the active span's child by default; undefined when not
 * tracing. The caller ends it; it does not become the active span.
 */
export function startSpan(name: string, options: SpanOptions = {}): Span | undefined {
  if (!TRACING) return undefined;
  const { attributes, links, root, startTime } = options;
  const kind = options.kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL;
  return tracer.startSpan(
    name,
    { attributes, links, root, kind, startTime },
    parentContext(options.parent),
  );
}

/**
 * Starts a span that {@link endSpan} ends, stamped with {@link spanTime}
 * (now, or `startTime` read from it earlier) so that both its ends are read on
 * one clock; otherwise as {@link startSpan}. Undefined when not tracing.
 */
export function startBatchedSpan(
  name: string,
  options: Omit<SpanOptions, "kind"> = {},
): Span | undefined {
  return TRACING
    ? startSpan(name, { ...options, startTime: options.startTime ?? spanTime() })
    : undefined;
}

function parentContext(parent: SpanContext | undefined): Context | undefined {
  return parent === undefined ? undefined : trace.setSpanContext(context.active(), parent);
}

/**
 * Runs `fn` in a span that is active for it (spans started inside are its
 * children), and ends the span when `fn` settles. A thrown `ServiceError`'s
 * code becomes `error.type` (its message does not: it may describe the input).
 * Without tracing, runs `fn(undefined)`.
 */
export function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!TRACING) return fn(undefined);
  const { attributes, links, root } = options;
  const kind = options.kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL;
  const parent = parentContext(options.parent) ?? context.active();
  return tracer.startActiveSpan(name, { attributes, links, root, kind }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Marks a span failed: `error.type` is the error's `code` when it has one
 * (a `ServiceError`), else its class name; the status is an error only for
 * what is not the client's (no `code`, or a storage failure).
 */
export function failed(span: Span | undefined, error: unknown): void {
  if (span === undefined) return;
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string") {
    span.setAttribute("error.type", code);
    if (code === "internal" || code === "unavailable") {
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    return;
  }
  span.setAttribute("error.type", error instanceof Error ? error.name : "unknown");
  span.setStatus({ code: SpanStatusCode.ERROR });
}

// The runtime stamps a span with the system clock (CLOCK_REALTIME). `timeOrigin
// + now()` is that clock read at start plus the monotonic time since, which
// runs at the same rate (NTP slews both); only a step of the system clock
// (set by hand, or an NTP step) parts them, and `checkClock` follows one.
const origin = performance.timeOrigin;
let stepped = 0;

/** Now, in milliseconds since the epoch with a fraction: what span times are stamped with. */
export function spanTime(): number {
  return origin + stepped + performance.now();
}

/** Follows a step of the system clock, to within a millisecond (`Date.now()` is whole ms). */
function checkClock(): void {
  const wall = Date.now();
  const ours = spanTime();
  if (ours < wall - 1 || ours > wall + 2) stepped += wall + 0.5 - ours;
}

/** How long an ended span may wait to be handed to the runtime, in ms. */
const FLUSH_MS = 100;
/** How many ended spans are handed over at once at most (the runtime queues 2,048). */
const FLUSH_SPANS = 256;

/** Spans ended and not yet handed to the runtime, and when each ended. */
const ended: Span[] = [];
const endedAt: number[] = [];
let timer: ReturnType<typeof setTimeout> | undefined;

/**
 * Ends a span now: its end time is read now, and it goes to the runtime with
 * the others ended meanwhile, within 100 ms or as soon as 256 wait (see the
 * module's note). For spans started by {@link startBatchedSpan}.
 */
export function endSpan(span: Span): void {
  ended.push(span);
  endedAt.push(spanTime());
  if (ended.length >= FLUSH_SPANS) flushSpans();
  else timer ??= setTimeout(flushSpans, FLUSH_MS);
}

/**
 * Hands every span ended through {@link endSpan} to the runtime now: before
 * the process (or a worker thread) stops, and before a worker answers.
 */
export function flushSpans(): void {
  clearTimeout(timer);
  timer = undefined;
  if (ended.length === 0) return;
  for (let i = 0; i < ended.length; i++) ended[i].end(endedAt[i]);
  ended.length = 0;
  endedAt.length = 0;
  checkClock();
}
