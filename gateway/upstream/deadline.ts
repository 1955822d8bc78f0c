/**
 * Deadlines for outbound HTTP that hold however the other side stalls: a call's deadline and
 * its caller's cancel as one AbortSignal on a plain timer (`startDeadline`), an answer that
 * comes at that signal whatever the call waits on (`settleWithin`), a body read the signal
 * cancels (`readBody`), and the three around one bare fetch (`fetchWithin`).
 *
 * Not `AbortSignal.any([signal, AbortSignal.timeout(ms)])`: on Node 20 the composite holds
 * its sources only weakly and a timeout signal nobody listens to directly is held by nothing
 * else, so a garbage collection during the wait drops it and the deadline never fires
 * (nodejs/node#57736; Node 22 and 24 keep it). A hung upstream then held its caller until the
 * client gave up (docs/decisions/0144-upstream-deadline-timer.md). Here the timer's closure
 * holds the controller, so the deadline lasts as long as the timer does.
 */

export interface Deadline {
  /** Aborts with the caller's reason when it cancels, or a TimeoutError at the deadline. */
  signal: AbortSignal;
  /** Stops the timer and lets go of the caller's signal: call it once the work is over. */
  clear(): void;
}

export function startDeadline(caller: AbortSignal, timeoutMs: number): Deadline {
  const controller = new AbortController();
  const onCancel = () => controller.abort(caller.reason);
  const timer = setTimeout(
    () => controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')),
    timeoutMs,
  );
  if (caller.aborted) onCancel();
  else caller.addEventListener('abort', onCancel, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      caller.removeEventListener('abort', onCancel);
    },
  };
}

/**
 * Settles as `work` does, or rejects with `onAbort()` as soon as `signal` fires, whatever
 * `work` is waiting on at that moment; `work` is left to end by itself. The answer's time then
 * rests on this listener alone, not on every await inside `work` honouring the signal: fetch
 * may drop an abort meant for a body still being read (nodejs/node#55428).
 */
export function settleWithin<T>(work: Promise<T>, signal: AbortSignal, onAbort: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(onAbort());
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

/**
 * The whole body, read under `signal`: fetch's own abort of a body in flight is lost to a
 * garbage collection in some of its paths (decision 0144), so the signal cancels the read
 * itself, which also lets go of the socket. Past `cap` bytes the read stops with `tooLarge()`.
 */
export async function readBody(
  response: Response,
  signal: AbortSignal,
  cap = Number.POSITIVE_INFINITY,
  tooLarge: () => Error = () => new Error(`a response larger than ${cap} bytes`),
): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const stop = () => void reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) stop();
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      // A cancelled read ends as if the body were complete: the signal tells the two apart.
      signal.throwIfAborted();
      if (done) return Buffer.concat(chunks);
      size += value.byteLength;
      if (size > cap) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(Buffer.from(value));
    }
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

/**
 * One `fetch` and its whole body under one deadline: rejects with a TimeoutError at
 * `timeoutMs`, whatever it is waiting on. For the calls made outside createUpstreamHttp
 * (memory's embeddings and write decider), which read their answers their own way.
 */
export async function fetchWithin(
  url: string,
  init: Omit<RequestInit, 'signal'>,
  timeoutMs: number,
): Promise<{ status: number; ok: boolean; text: string; json(): unknown }> {
  const within = startDeadline(new AbortController().signal, timeoutMs);
  const call = async () => {
    const response = await fetch(url, { ...init, signal: within.signal });
    const text = (await readBody(response, within.signal)).toString('utf8');
    return {
      status: response.status,
      ok: response.ok,
      text,
      /** The body as JSON, or null when it is not JSON. */
      json(): unknown {
        try {
          return JSON.parse(text);
        } catch {
          return null;
        }
      },
    };
  };
  try {
    return await settleWithin(call(), within.signal, () => within.signal.reason as Error);
  } finally {
    within.clear();
  }
}
