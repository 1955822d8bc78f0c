/**
 * MEMORY_EMBED_NICE: the embedding pool's threads run at the configured nice value and the
 * rest of the process keeps its own. Read back from the kernel, /proc/<pid>/task/<tid>/stat.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Embedder } from '../../../gateway/namespaces/memory/embeddings/embedder.ts';

function niceOf(tid: number): number {
  const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
  // Field 2, the thread name, is in parentheses and may hold spaces; nice is field 19.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

function threadNices(): [number, number][] {
  const nices: [number, number][] = [];
  for (const entry of readdirSync(`/proc/${process.pid}/task`)) {
    try {
      nices.push([Number(entry), niceOf(Number(entry))]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return nices;
}

test('the embedding thread runs at MEMORY_EMBED_NICE, the request thread keeps its priority', {
  skip: !existsSync('/proc/thread-self') && 'needs Linux /proc',
}, async () => {
  const own = niceOf(process.pid);
  const target = Math.min(own + 7, 19);
  // A refused connection makes the task return at once, after the thread has started.
  const embedder = new Embedder(
    { provider: 'openai', url: 'http://127.0.0.1:9', model: 'm', timeoutMs: 2_000 },
    { threads: 1, queryTimeoutMs: 2_000, nice: target },
  );
  try {
    await assert.rejects(embedder.embed(['text']));
    const niced = threadNices().filter(([, nice]) => nice === target);
    assert.equal(niced.length, 1, `one thread at nice ${target}: ${JSON.stringify(threadNices())}`);
    assert.equal(niceOf(process.pid), own);
  } finally {
    await embedder.close();
  }
});
