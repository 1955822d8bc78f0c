/**
 * A gateway with a real broker worker and its ops listener, for readiness tests: what
 * /readyz answers, and one close for everything.
 */
import { createLogger } from '../../../gateway/logger.ts';
import { startOpsListener } from '../../../gateway/ops/ops-server.ts';
import { clientFor, startWorker, type WorkerProcess } from '../../broker-worker/support/worker-process.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { waitFor } from '../../support/harness.ts';

export interface Readiness {
  ready: boolean;
  draining: boolean;
  checks: Record<string, { ok: boolean; error?: string; advisory?: true }>;
}

export interface ReadinessStack {
  worker: WorkerProcess;
  gw: TestGateway;
  readyz(): Promise<{ status: number; body: Readiness }>;
  /** Waits until /readyz answers 200, naming what is awaited in a timeout. */
  untilReady(what: string): Promise<void>;
  close(): Promise<void>;
}

/** `env` goes to the gateway. A worker with no broker settings still answers status: the link is what is checked. */
export async function startReadinessStack(env: Record<string, string> = {}): Promise<ReadinessStack> {
  const worker = await startWorker({});
  const broker = clientFor(worker.address);
  const gw = await startTestGateway({ broker, env });
  const ops = await startOpsListener(
    '127.0.0.1',
    0,
    {
      metrics: () => Promise.resolve({ contentType: 'text/plain', text: '' }),
      readiness: () => gw.gateway.readiness(),
    },
    createLogger('silent'),
  );
  const url = `http://127.0.0.1:${ops.port}/readyz`;
  const readyz = async () => {
    const response = await fetch(url);
    return { status: response.status, body: (await response.json()) as Readiness };
  };
  return {
    worker,
    gw,
    readyz,
    async untilReady(what) {
      await waitFor(async () => (await readyz()).status === 200, { what, timeoutMs: 30_000 });
    },
    async close() {
      await ops.close();
      await gw.close().catch(() => {});
      await broker.close();
      await worker.stop();
    },
  };
}
