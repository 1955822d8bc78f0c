/**
 * memory_write end to end: a real gateway process (an embedder on, indexing
 * in the background as in production), autocannon over loopback HTTP, every request a new
 * text so dedup never short-cuts it. Every answer is checked afterwards: the key's count
 * must equal the writes answered. memory_get of one id on the same gateway, right after,
 * is the baseline (same transport, a one-row read), and a
 * run with embeddings off shows what the background indexer's CPU costs the write path.
 * CPU per write is read from /proc for the gateway process and for its request thread:
 * on a shared machine the wall-clock tail moves with the load, CPU per write much less.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startChild } from './child.ts';
import { callTool, toolsCallBody } from './mcp-call.ts';

export interface McpWriteFigures {
  concurrency: number;
  embeddings: 'local' | 'minilm' | 'none';
  rps: number;
  p50Ms: number;
  p99Ms: number;
  getP50Ms: number;
  getP99Ms: number;
  pendingAfter: number;
  /** Gateway CPU per answered write (every thread: request, embedding, checkpointer, GC). */
  cpuMsPerWrite: number;
  /** The request thread's share of it. */
  requestThreadCpuMsPerWrite: number;
}

/** CPU time (ms) used so far by a process, in all and by its main thread (Linux /proc). */
async function cpuMs(pid: number): Promise<{ all: number; main: number }> {
  const ticks = (stat: string) => {
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, 100 ticks a second
  };
  let all = 0;
  let main = 0;
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    // A thread may end between the listing and the read.
    const used = ticks(await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => ') 0'));
    all += Number.isNaN(used) ? 0 : used;
    if (Number(tid) === pid) main = used;
  }
  return { all, main };
}

export async function benchMcpWrites(
  seconds: number,
  concurrency: number,
  texts: string[],
  embeddings: McpWriteFigures['embeddings'],
  log: (line: string) => void,
): Promise<McpWriteFigures> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-bench-memory-mcp-'));
  const gateway = await startChild('bench/servers/gateway.ts', {
    DATA_DIR: dataDir,
    MEMORY_EMBEDDINGS: embeddings,
    MEMORY_MAX_PER_KEY: '10000000',
    LOG_LEVEL: 'warn',
  });
  const url = `http://127.0.0.1:${gateway.info.port}/memory/mcp`;
  const key = String(gateway.info.key);
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'x-api-key': key,
  };
  try {
    const warm = await callTool<{ id: string }>(url, key, 'memory_write', { content: 'warm-up write' });
    let n = 0;
    log(
      `memory: memory_write over MCP, ${concurrency} connections for ${seconds} s, embeddings ${embeddings}`,
    );
    const cpuBefore = await cpuMs(gateway.info.pid);
    const writes = await autocannon({
      url,
      method: 'POST',
      headers,
      requests: [
        {
          setupRequest: (request) => {
            n++;
            const text = texts[n % texts.length]!;
            return {
              ...request,
              body: toolsCallBody('memory_write', { content: `${text} (note ${n})`, tags: ['bench'] }),
            };
          },
        },
      ],
      connections: concurrency,
      duration: seconds,
    });
    const cpuAfter = await cpuMs(gateway.info.pid);
    const stats = await autocannon({
      url,
      method: 'POST',
      headers,
      body: toolsCallBody('memory_get', { id: warm.id }),
      connections: concurrency,
      duration: Math.max(2, Math.round(seconds / 2)),
    });
    const after = await callTool<{ count: number; pending_embeddings: number }>(url, key, 'memory_stats', {});
    // Answered writes (plus the warm-up) must all be stored; an error answer would not be.
    // Writes still in flight when the clock stopped may add a few more.
    if (writes.non2xx > 0 || after.count < writes.requests.total + 1) {
      throw new Error(
        `memory_write: ${writes.requests.total} answered, ${after.count - 1} stored, ${writes.non2xx} non-2xx`,
      );
    }
    return {
      concurrency,
      embeddings,
      rps: Math.round(writes.requests.average),
      p50Ms: writes.latency.p50,
      p99Ms: writes.latency.p99,
      getP50Ms: stats.latency.p50,
      getP99Ms: stats.latency.p99,
      pendingAfter: after.pending_embeddings,
      cpuMsPerWrite: Math.round(((cpuAfter.all - cpuBefore.all) / writes.requests.total) * 1000) / 1000,
      requestThreadCpuMsPerWrite:
        Math.round(((cpuAfter.main - cpuBefore.main) / writes.requests.total) * 1000) / 1000,
    };
  } finally {
    await gateway.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
