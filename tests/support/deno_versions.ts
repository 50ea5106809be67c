/**
 * Other Deno versions for the tests, as `npx --yes deno@VERSION` installs
 * them from the npm registry: Deno Deploy runs an older Deno (2.5) than the
 * one the tests run on, and a store must read the same on both.
 * @module
 */

/** The Deno version Deno Deploy runs. */
export const DEPLOY_DENO = "2.5.0";

const found = new Map<string, Promise<string>>();

/**
 * The path of the Deno binary of `version`, installed by npx on first use.
 *
 * @throws {Error} when npx cannot install or run it.
 */
export function denoBinary(version: string): Promise<string> {
  let path = found.get(version);
  if (!path) {
    path = (async () => {
      const output = await new Deno.Command("npx", {
        args: ["--yes", `deno@${version}`, "eval", "console.log(Deno.execPath())"],
        stdout: "piped",
        stderr: "piped",
        stdin: "null",
      }).output();
      const text = new TextDecoder().decode(output.stdout).trim();
      if (!output.success || text === "") {
        throw new Error(
          `npx --yes deno@${version} failed: ${new TextDecoder().decode(output.stderr).trim()}`,
        );
      }
      return text;
    })();
    found.set(version, path);
  }
  return path;
}
