/**
 * A process's memory and CPU time, read from /proc (Linux), for the load
 * tools' figures and the tests that bound a server's memory.
 * @module
 */

/**
 * Peak and current resident memory of a process, in bytes, from /proc (Linux;
 * Deno reads /proc only with all permissions, hence `deno run -A` in the task).
 */
export function readMemory(pid: number): { peak: number; current: number } | null {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const kb = (name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1]);
    const peak = kb("VmHWM");
    const current = kb("VmRSS");
    return Number.isFinite(peak) && Number.isFinite(current)
      ? { peak: peak * 1024, current: current * 1024 }
      : null;
  } catch {
    return null;
  }
}

/**
 * Resets a process's peak resident memory (VmHWM) to its current one, so that
 * the next peak read belongs to one phase of a run. False where Linux refuses.
 */
export function resetPeakMemory(pid: number): boolean {
  try {
    Deno.writeTextFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/**
 * CPU time (user + system, all threads) a process has used, in seconds, from
 * /proc; null where it cannot be read. Linux counts it in ticks of 1/100 s.
 */
export function readCpuSeconds(pid: number): number | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // The command name may hold spaces; the fields after it are plain.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / 100 : null;
  } catch {
    return null;
  }
}
