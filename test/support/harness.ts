/**
 * The small things nearly every test needs, said once: a free loopback port, a wait for a
 * condition that fails with what it waited for (never a bare sleep, never a hang), and a
 * fresh API key in a data directory's key store.
 *
 * Starting a gateway lives beside this: test/support/gateway.ts runs one in-process and
 * test/support/gateway-process.ts runs `gateway/main.ts` as a child, both built on these
 * helpers. They stay separate modules because importing the in-process gateway loads the
 * whole server, which IPC and broker-worker tests that only want `waitFor` should not pay for.
 */
import { createServer } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { inspect } from 'node:util';
import { stateStorePath } from '../../gateway/accounts/open.ts';
import { ApiKeyStore, type CreatedApiKey, type CreateKeyOptions } from '../../gateway/keys/store.ts';

/** A loopback port that was free a moment ago (bound, read, released). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** True when nothing listens on the port any more (binding it succeeds). */
export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

export interface WaitOptions {
  /**
   * What the condition means, for the failure message: "the gateway to listen". A function
   * is called only on timeout, so it can add what was seen by then (a process's output).
   */
  what: string | (() => string);
  /** Give up after this long; default 10 s. */
  timeoutMs?: number;
  /** Time between checks; default 25 ms. */
  intervalMs?: number;
}

/**
 * Polls `check` until it returns a truthy value and returns that value. On timeout throws
 * `timed out after N ms waiting for <what>; last value: …`. A check that throws ends the
 * wait with its error at once (a dead process is not "not yet"): a check for which an error
 * means "not yet", such as a fetch before the server listens, catches it itself.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { what, timeoutMs = 10_000, intervalMs = 25 }: WaitOptions,
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const started = Date.now();
  for (;;) {
    const last = await check();
    if (last) return last as Exclude<T, false | null | undefined | 0 | ''>;
    if (Date.now() - started >= timeoutMs) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}; last value: ${inspect(last, { depth: 3 })}`,
      );
    }
    await delay(intervalMs);
  }
}

/**
 * Lets time pass. Only for tests where elapsed time is itself the thing checked (a rate
 * limit window, a cache TTL, a grace period, "nothing happens for a while"); anything else
 * waits for its condition with `waitFor`.
 */
export function elapse(ms: number): Promise<void> {
  return delay(Math.max(0, ms));
}

/** Opens the key store a gateway with this DATA_DIR reads; the caller closes it. */
export function openKeyStore(dataDir: string): ApiKeyStore {
  return new ApiKeyStore(stateStorePath(dataDir));
}

/** Mints one API key in `dataDir`'s key store (owner null: the operator account). */
export function mintKey(
  dataDir: string,
  label = 'test',
  owner: string | null = null,
  options: CreateKeyOptions = {},
): CreatedApiKey {
  const store = openKeyStore(dataDir);
  try {
    return store.create(label, owner, options);
  } finally {
    store.close();
  }
}
