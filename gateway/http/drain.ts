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

/** Counts requests in flight so a stopping gateway can answer each of them before it closes. */
export function drainable(inner: RequestHandler): Drainable {
  let inFlight = 0;
  let draining = false;
  const idleWaiters = new Set<() => void>();
  return {
    get inFlight() {
      return inFlight;
    },
    handler: async (context) => {
      if (draining) return SHUTTING_DOWN;
      inFlight += 1;
      let counted = false;
      const countOut = () => {
        if (counted) return;
        counted = true;
        inFlight -= 1;
        if (inFlight === 0) for (const wake of idleWaiters) wake();
      };
      let response: HttpResponse;
      try {
        response = await inner(context);
      } catch (error) {
        setImmediate(countOut);
        throw error;
      }
      const onWritten = response.onWritten;
      if (!onWritten) {
        // Counted out only after the engine has written the answer (it does so in a
        // continuation of this promise), so a drain never closes over an unsent answer.
        setImmediate(countOut);
        return response;
      }
      // An answer whose delivery matters (a poll's lease) counts out once the engine has
      // reported it, so what that report settles is queued before the drain ends.
      return {
        ...response,
        onWritten: (ok) => {
          try {
            onWritten(ok);
          } finally {
            countOut();
          }
        },
      };
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
