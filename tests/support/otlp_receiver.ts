/**
 * An OTLP/HTTP receiver for the telemetry tests: a `Deno.serve` on
 * 127.0.0.1 that takes `POST /v1/traces`, `/v1/metrics` and `/v1/logs` as
 * JSON (what Deno exports with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) and
 * keeps every span, metric data point and log record, and each body's text.
 * @module
 */

import assert from "node:assert/strict";
import { sleep } from "./time.ts";

/** An attribute value as OTLP/JSON carries it, read into plain JSON. */
export type AttributeValue = string | number | boolean | AttributeValue[] | null;

/** One exported span. */
export interface ExportedSpan {
  scope: string;
  name: string;
  /** OTLP's enum: 1 internal, 2 server, 3 client. */
  kind: number;
  traceId: string;
  spanId: string;
  /** Empty or absent for a root span. */
  parentSpanId?: string;
  attributes: Record<string, AttributeValue>;
  links: { traceId: string; spanId: string }[];
  /** When it started and ended, in ms since the epoch (to the microsecond). */
  startMs: number;
  endMs: number;
}

/** One exported data point of a metric. */
export interface ExportedPoint {
  scope: string;
  metric: string;
  /** `sum`, `gauge` or `histogram`. */
  type: string;
  attributes: Record<string, AttributeValue>;
  /** A sum's or gauge's value; a histogram's count. */
  value: number;
}

/** One exported log record. */
export interface ExportedLog {
  body: string;
  traceId?: string;
  spanId?: string;
}

/** A running receiver and what it got. */
export interface OtlpReceiver {
  /** `OTEL_EXPORTER_OTLP_ENDPOINT` for a process that exports to it. */
  endpoint: string;
  spans: ExportedSpan[];
  points: ExportedPoint[];
  logs: ExportedLog[];
  /** Every body received, as text (to search for what must never be exported). */
  texts: string[];
  /** Resolves once `predicate` holds, or fails the test after `timeoutMs`. */
  until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void>;
  close(): Promise<void>;
}

/** The environment that makes a Deno process export to `endpoint` as JSON, metrics every 200 ms. */
export function otelEnv(endpoint: string): Record<string, string> {
  return {
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_METRIC_EXPORT_INTERVAL: "200",
    OTEL_SERVICE_NAME: "intents-test",
  };
}

type Json = Record<string, unknown>;

function valueOf(value: Json | undefined): AttributeValue {
  if (value === undefined) return null;
  if ("stringValue" in value) return value.stringValue as string;
  if ("intValue" in value) return Number(value.intValue);
  if ("doubleValue" in value) return Number(value.doubleValue);
  if ("boolValue" in value) return value.boolValue as boolean;
  if ("arrayValue" in value) {
    const values = ((value.arrayValue as Json).values ?? []) as Json[];
    return values.map(valueOf);
  }
  return null;
}

function attributesOf(list: unknown): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  for (const { key, value } of (list ?? []) as { key: string; value: Json }[]) {
    attributes[key] = valueOf(value);
  }
  return attributes;
}

/** A time in nanoseconds since the epoch (OTLP/JSON writes it as a string) in ms, to the µs. */
function msOf(nanos: unknown): number {
  return Number(BigInt(String(nanos)) / 1000n) / 1000;
}

function readTraces(body: Json, spans: ExportedSpan[]): void {
  for (const resource of (body.resourceSpans ?? []) as Json[]) {
    for (const scoped of (resource.scopeSpans ?? []) as Json[]) {
      const scope = ((scoped.scope as Json | undefined)?.name ?? "") as string;
      for (const span of (scoped.spans ?? []) as Json[]) {
        spans.push({
          scope,
          name: span.name as string,
          kind: span.kind as number,
          traceId: span.traceId as string,
          spanId: span.spanId as string,
          parentSpanId: span.parentSpanId as string | undefined,
          attributes: attributesOf(span.attributes),
          links: ((span.links ?? []) as Json[]).map((link) => ({
            traceId: link.traceId as string,
            spanId: link.spanId as string,
          })),
          startMs: msOf(span.startTimeUnixNano),
          endMs: msOf(span.endTimeUnixNano),
        });
      }
    }
  }
}

function readMetrics(body: Json, points: ExportedPoint[]): void {
  for (const resource of (body.resourceMetrics ?? []) as Json[]) {
    for (const scoped of (resource.scopeMetrics ?? []) as Json[]) {
      const scope = ((scoped.scope as Json | undefined)?.name ?? "") as string;
      for (const metric of (scoped.metrics ?? []) as Json[]) {
        for (const type of ["sum", "gauge", "histogram"]) {
          const data = metric[type] as Json | undefined;
          if (data === undefined) continue;
          for (const point of (data.dataPoints ?? []) as Json[]) {
            const value = type === "histogram"
              ? Number(point.count)
              : Number(point.asDouble ?? point.asInt);
            points.push({
              scope,
              metric: metric.name as string,
              type,
              attributes: attributesOf(point.attributes),
              value,
            });
          }
        }
      }
    }
  }
}

function readLogs(body: Json, logs: ExportedLog[]): void {
  for (const resource of (body.resourceLogs ?? []) as Json[]) {
    for (const scoped of (resource.scopeLogs ?? []) as Json[]) {
      for (const record of (scoped.logRecords ?? []) as Json[]) {
        logs.push({
          body: String(valueOf(record.body as Json | undefined)),
          traceId: record.traceId as string | undefined,
          spanId: record.spanId as string | undefined,
        });
      }
    }
  }
}

/** Starts a receiver on a free port of 127.0.0.1. */
export function startOtlpReceiver(): OtlpReceiver {
  const spans: ExportedSpan[] = [];
  const points: ExportedPoint[] = [];
  const logs: ExportedLog[] = [];
  const texts: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const path = new URL(request.url).pathname;
    const text = await request.text();
    if (request.method !== "POST") return new Response(null, { status: 405 });
    texts.push(text);
    const body = JSON.parse(text) as Json;
    if (path === "/v1/traces") readTraces(body, spans);
    else if (path === "/v1/metrics") readMetrics(body, points);
    else if (path === "/v1/logs") readLogs(body, logs);
    else return new Response(null, { status: 404 });
    return Response.json({});
  });
  return {
    endpoint: `http://127.0.0.1:${server.addr.port}`,
    spans,
    points,
    logs,
    texts,
    async until(predicate, timeoutMs, what) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate()) {
        if (Date.now() > deadline) {
          assert.fail(`${what}: not within ${timeoutMs} ms (${spans.length} spans so far)`);
        }
        await sleep(50);
      }
    },
    close: () => server.shutdown(),
  };
}
