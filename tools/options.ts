/**
 * What every measuring tool does with its command line: refuse a bad option
 * with a one-line message naming the tool and exit 2, read whole numbers
 * within bounds, and drop the `--` that `deno task name -- …` hands on.
 * @module
 */

/** The option helpers of one tool, whose messages start with `tool:`. */
export interface ToolOptions {
  /** Prints `tool: message` on stderr and exits 2. */
  fail(message: string): never;
  /**
   * `raw` as a whole number from `min` (default 1) to `max`, or `fallback`
   * when absent; anything else fails, naming `--name`.
   */
  int(raw: string | undefined, name: string, fallback: number, max: number, min?: number): number;
  /** The arguments after the `--` that `deno task name -- …` hands on. */
  args(argv: readonly string[]): string[];
}

/**
 * The option helpers of `tool`.
 *
 * @example
 * ```ts
 * const { fail, int } = toolOptions("load");
 * const n = int("2000", "n", 20_000, 1_000_000); // 2000
 * ```
 */
export function toolOptions(tool: string): ToolOptions {
  const fail = (message: string): never => {
    console.error(`${tool}: ${message}`);
    Deno.exit(2);
  };
  return {
    fail,
    int(raw, name, fallback, max, min = 1) {
      if (raw === undefined) return fallback;
      if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
        fail(`--${name} must be a whole number from ${min} to ${max}`);
      }
      return Number(raw);
    },
    args: (argv) => argv[0] === "--" ? argv.slice(1) : [...argv],
  };
}
