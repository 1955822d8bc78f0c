/**
 * An engine makes a request's abort signal (an AbortController) on its first read, so a
 * memory tool that has no use for it must not read it: memory_write and memory_get leave it
 * unread, memory_search reads it (it hands it to the reranker). Real SQLite store in a
 * temporary DATA_DIR, the namespace as the registry mounts it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import type { GatewayConfig } from '../../../gateway/config.ts';
import { parseSettings } from '../../../gateway/mcp/namespace-mount.ts';
import type { ToolContext, ToolDefinition } from '../../../gateway/mcp/tool.ts';
import { memoryNamespace } from '../../../gateway/namespaces/memory/index.ts';

/** A context that counts reads of `signal`, as an engine's lazily made one would be made. */
function countingContext(): { context: ToolContext; reads: () => number } {
  let reads = 0;
  const controller = new AbortController();
  const context = {
    caller: { apiKeyId: 'key_signal' },
    requestId: 'r',
    get signal() {
      reads += 1;
      return controller.signal;
    },
  } as ToolContext;
  return { context, reads: () => reads };
}

test('memory_write and memory_get never read the request signal; memory_search does', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-signal-'));
  const { settings } = parseSettings(memoryNamespace.settings, { MEMORY_EMBEDDINGS: 'none' });
  const parts = memoryNamespace.create(settings!, {
    config: { DATA_DIR: dataDir } as GatewayConfig,
    log: pino({ level: 'silent' }),
  });
  try {
    const tools = new Map((await parts.tools()).map((tool) => [tool.name, tool]));
    const call = async (name: string, args: object) => {
      const tool = tools.get(name) as ToolDefinition;
      const { context, reads } = countingContext();
      const output = (await tool.handler(tool.input.parse(args), context)) as Record<string, unknown>;
      return { output, reads: reads() };
    };
    const written = await call('memory_write', { content: 'The signal test wrote this memory.' });
    assert.equal(written.reads, 0, 'memory_write read the signal');
    const got = await call('memory_get', { id: written.output.id });
    assert.equal(got.output.content, 'The signal test wrote this memory.');
    assert.equal(got.reads, 0, 'memory_get read the signal');
    const searched = await call('memory_search', { query: 'signal test' });
    assert.ok(searched.reads > 0, 'memory_search hands the signal on');
  } finally {
    await parts.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});
