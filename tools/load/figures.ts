/**
 * The figures the load tools print: percentiles of latencies, rounding.
 * @module
 */

/** The p-th percentile (0–100) of sorted values. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

/** Rounds to `digits` decimals. */
export function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** p50, p95, p99 and max of sorted milliseconds, rounded. */
export function summary(
  sorted: Float64Array,
): { p50: number; p95: number; p99: number; max: number } {
  return {
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    max: round(percentile(sorted, 100)),
  };
}
