/** Bench servers run as child processes and announce themselves with one JSON line on stdout. */
export function announce(details: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid, ...details })}\n`);
}
