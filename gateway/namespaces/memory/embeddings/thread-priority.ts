import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Sets the nice value of the calling thread only. On Linux, setpriority() on a thread id
 * affects that one thread, and Node's os.setPriority passes the id through; the id comes
 * from /proc/thread-self ("<pid>/task/<tid>"). Piscina's own `niceIncrement` does the same
 * through an optional native package and skips silently when it is missing, so it is not
 * used. Returns false where threads cannot be told apart (no /proc) or the kernel refuses
 * (a process already niced above `nice` may not go back): the thread then keeps the
 * process's priority, as before this setting existed.
 */
export function niceThisThread(nice: number): boolean {
  if (nice === 0) return true;
  let tid: number;
  try {
    tid = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
  } catch {
    return false;
  }
  // On a platform without per-thread priorities this would renice the whole gateway.
  if (!Number.isInteger(tid) || tid <= 0) return false;
  try {
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
