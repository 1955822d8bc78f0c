import type { Logger } from 'pino';
import { z } from 'zod';
import { fetchWithin } from '../../upstream/deadline.ts';
import type { MemoryRecord } from './store/types.ts';

/**
 * The optional write-time decision (MEMORY_WRITE_DECIDER=llm), as mem0's classic pipeline
 * makes it: given a new memory and the closest stored ones, an OpenAI-compatible chat
 * model answers add, update, delete or skip. Nothing is ever deleted here: `update` and
 * `delete` both store the new memory and mark the named older one superseded (hidden from
 * search, still readable), `skip` stores nothing and returns the memory that already says
 * it. Any failure (unreachable, refused, an answer that does not parse or names an id it
 * was not shown) falls back to `add`: a write is never lost to the model.
 */
export type WriteAction = 'add' | 'update' | 'delete' | 'skip';

export interface WriteDecision {
  action: WriteAction;
  /** The existing memory the action is about (update, delete, skip). */
  target?: string;
  /** Why the decision fell back to add, when it did. */
  fallback?: string;
}

export interface DeciderSettings {
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
}

const Answer = z.object({
  action: z.enum(['add', 'update', 'delete', 'skip']),
  id: z.string().optional(),
});

const INSTRUCTIONS = [
  'You maintain a long-term memory. A new memory is about to be stored; the closest existing memories are listed with their ids.',
  'Answer with a JSON object {"action": ..., "id": ...}:',
  '- "add": the new memory is new information (no id).',
  '- "update": it replaces an existing memory about the same thing with newer or fuller information (id of that memory).',
  '- "delete": it contradicts an existing memory, which is no longer true (id of that memory).',
  '- "skip": an existing memory already says the same (id of that memory).',
].join('\n');

export class WriteDecider {
  constructor(
    private readonly settings: DeciderSettings,
    private readonly log: Logger,
  ) {}

  async decide(content: string, related: MemoryRecord[]): Promise<WriteDecision> {
    if (related.length === 0) return { action: 'add' };
    let reply: Awaited<ReturnType<typeof fetchWithin>>;
    try {
      // The deadline covers the answer's body too: a model that stalls mid-answer must not hold the write.
      reply = await fetchWithin(
        `${this.settings.url.replace(/\/+$/, '')}/chat/completions`,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(this.settings.apiKey ? { authorization: `Bearer ${this.settings.apiKey}` } : {}),
          },
          body: JSON.stringify({
            model: this.settings.model,
            response_format: { type: 'json_object' },
            messages: [
              { role: 'system', content: INSTRUCTIONS },
              {
                role: 'user',
                content: JSON.stringify({
                  new_memory: content,
                  existing: related.map((m) => ({
                    id: m.id,
                    content: m.content,
                    written: new Date(m.updatedAt).toISOString(),
                  })),
                }),
              },
            ],
          }),
          redirect: 'error',
        },
        this.settings.timeoutMs,
      );
    } catch (error) {
      return this.fallback(`model unreachable (${(error as Error).name})`);
    }
    if (!reply.ok) return this.fallback(`model answered HTTP ${reply.status}`);
    const body = reply.json() as {
      choices?: { message?: { content?: unknown } }[];
    } | null;
    const text = body?.choices?.[0]?.message?.content;
    let parsed: z.infer<typeof Answer>;
    try {
      parsed = Answer.parse(JSON.parse(typeof text === 'string' ? text : ''));
    } catch {
      return this.fallback('model answer is not the JSON asked for');
    }
    if (parsed.action === 'add') return { action: 'add' };
    if (!related.some((m) => m.id === parsed.id))
      return this.fallback('model named a memory it was not shown');
    return { action: parsed.action, target: parsed.id! };
  }

  private fallback(reason: string): WriteDecision {
    this.log.warn({ reason }, 'memory write decision failed; storing the memory as new');
    return { action: 'add', fallback: reason };
  }
}
