import type { HttpResponse, RequestHandler } from './engine.ts';

const SHUTTING_DOWN: HttpResponse = {
  status: 503,
  headers: { 'content-type': 'application/json', 'retry-after': '1', connection: 'close' },
  body: JSON.stringify({
    error: 'shutting_down',
    message:
      'This gateway is shutting down; retry in a moment (another instance, or this one after its restart).',
  }),
};

export interface Drainable {
  handler: RequestHandler;
  readonly inFlight: number;
  /**
   * From now on requests get 503 (a keep-alive connection may still bring one in);
   * resolves true once every request already in flight has been answered, false if
   * `timeoutMs` passed first.
   */
  drain(timeoutMs: number): Promise<boolean>;
}

/**
 * The answer, arranged to be counted out once written: at the next turn (the engine writes it
 * in a continuation of this promise, so a drain never closes over an unsent answer), or, for
 * an answer whose delivery matters (a poll's lease), once the engine has reported it, so
 * what that report settles is queued before the drain ends.
 */
function countedOutWhenWritten(
  response: HttpResponse,
  leaveSoon: () => void,
  leave: (count: number) => void,
): HttpResponse {
  const onWritten = response.onWritten;
  if (!onWritten) {
    leaveSoon();
    return response;
  }
  let counted = false;
  return {
    ...response,
    onWritten: (ok) => {
      try {
        onWritten(ok);
      } finally {
        if (!counted) {
          counted = true;
          leave(1);
        }
      }
    },
  };
}

/** Counts requests in flight so a stopping gateway can answer each of them before it closes. */
export function drainable(inner: RequestHandler): Drainable {
  let inFlight = 0;
  let draining = false;
  const idleWaiters = new Set<() => void>();
  const leave = (count: number) => {
    inFlight -= count;
    if (inFlight === 0) for (const wake of idleWaiters) wake();
  };
  // Answers written in this turn of the event loop are counted out together in the next:
  // one setImmediate per turn instead of one per request.
  let leaving = 0;
  const leaveTogether = () => {
    const count = leaving;
    leaving = 0;
    leave(count);
  };
  const leaveSoon = () => {
    if (leaving === 0) setImmediate(leaveTogether);
    leaving += 1;
  };
  const failed = (error: unknown): never => {
    leaveSoon();
    throw error;
  };
  const countedOut = (response: HttpResponse) => countedOutWhenWritten(response, leaveSoon, leave);
  return {
    get inFlight() {
      return inFlight;
    },
    // A then, not an async function: one promise per request instead of two and a resumption.
    handler: (context) => {
      if (draining) return Promise.resolve(SHUTTING_DOWN);
      inFlight += 1;
      try {
        return inner(context).then(countedOut, failed);
      } catch (error) {
        // A handler that throws before its first await is counted out like one that rejects.
        leaveSoon();
        return Promise.reject(error);
      }
    },
    drain(timeoutMs) {
      draining = true;
      if (inFlight === 0) return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = (idle: boolean) => {
          clearTimeout(timer);
          idleWaiters.delete(onIdle);
          resolve(idle);
        };
        const onIdle = () => done(true);
        const timer = setTimeout(() => done(false), timeoutMs);
        idleWaiters.add(onIdle);
      });
    },
  };
}
