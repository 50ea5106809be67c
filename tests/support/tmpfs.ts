/**
 * A small real file system that tests can fill: a tmpfs mounted on a temp
 * directory (root only), and a filler file that takes all its free space.
 * @module
 */

/**
 * Runs `fn` with a fresh tmpfs of `size` (e.g. "2m") mounted on a temp
 * directory, and unmounts it afterwards. Where that cannot be done (not
 * root, or the mount is refused) it prints why and does not run `fn`.
 *
 * @returns true when `fn` ran.
 */
export async function withTmpfs(
  size: string,
  fn: (dir: string) => Promise<void>,
): Promise<boolean> {
  if (Deno.uid() !== 0) {
    console.log("skipped: mounting a tmpfs needs root");
    return false;
  }
  const dir = await Deno.makeTempDir({ prefix: "intents-tmpfs-" });
  const mounted = await new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir],
    stdout: "null",
    stderr: "piped",
  }).output().catch((error) => ({ success: false, stderr: new TextEncoder().encode(`${error}`) }));
  if (!mounted.success) {
    console.log(
      `skipped: cannot mount a tmpfs: ${new TextDecoder().decode(mounted.stderr).trim()}`,
    );
    await Deno.remove(dir);
    return false;
  }
  try {
    await fn(dir);
  } finally {
    const unmounted = await new Deno.Command("umount", { args: [dir] }).output();
    if (unmounted.success) await Deno.remove(dir);
  }
  return true;
}

/**
 * Writes `path` until the file system has no space left.
 *
 * @returns the bytes written.
 */
export async function fillDisk(path: string): Promise<number> {
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const chunk = new Uint8Array(16 * 1024);
  let written = 0;
  try {
    for (;;) written += await file.write(chunk);
  } catch (error) {
    if (!/no space left/i.test(String(error))) throw error;
  } finally {
    file.close();
  }
  return written;
}
