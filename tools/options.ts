/**
 * What every measuring tool does with its command line: refuse a bad option
 * with a one-line message naming the tool and exit 2, read whole numbers
 * within bounds, and drop the `--` that `deno task name -- …` hands on.
 * @module
 */

import { parseArgs, type ParseArgsConfig } from "node:util";

/** The options a tool takes, as `node:util`'s `parseArgs` describes them. */
export type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

/** The values `parseArgs` reads for `O`, strictly. */
export type OptionValues<O extends OptionSpec> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true }>
>["values"];

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
  /**
   * The values of `argv` (after the `--`) for `options`, strictly: an option
   * it does not know, a missing value or a positional fails, with `usage`.
   */
  parse<O extends OptionSpec>(argv: readonly string[], options: O, usage: string): OptionValues<O>;
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
  const args = (argv: readonly string[]) => argv[0] === "--" ? argv.slice(1) : [...argv];
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
    args,
    parse(argv, options, usage) {
      try {
        return parseArgs({ args: args(argv), options, strict: true }).values;
      } catch (error) {
        return fail(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
      }
    },
  };
}
