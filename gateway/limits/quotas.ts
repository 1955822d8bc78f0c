/**
 * Daily quotas and the long-poll cap, in front of each tool's handler: the arguments were
 * already validated (a malformed call costs nothing) and nothing of the tool runs when the
 * key is over. Quota counters live in the state store, so restarts and other gateway
 * processes see the same count; the poll cap counts in the process's shared table.
 */
import type { QuotaTake } from '../core/key-limits.ts';
import type { NamespaceDefinition } from '../mcp/model.ts';
import { ToolError } from '../mcp/tool.ts';
import type { LimitObserver } from './rate-gate.ts';
import type { SharedLimitTable } from './shared-table.ts';

export interface QuotaCounter {
  takeQuota(keyId: string, day: string, name: string, limit: number): Promise<QuotaTake>;
}

export interface MeterOptions {
  store: QuotaCounter;
  table: SharedLimitTable;
  observe?: LimitObserver;
}

/** The tool whose concurrent calls --max-polls caps: the long poll. */
const LONG_POLL = { namespace: 'event', tool: 'event_consume' };

/** Quotas are per UTC day, so every gateway, wherever it runs, resets them at the same instant. */
export function utcDay(at: Date = new Date()): string {
  return at.toISOString().slice(0, 10);
}

export function nextUtcMidnight(at: Date = new Date()): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1));
}

function quotaError(keyId: string, name: string, limit: number): ToolError {
  const now = new Date();
  const reset = nextUtcMidnight(now);
  const minutes = Math.ceil((reset.getTime() - now.getTime()) / 60_000);
  return new ToolError(
    'quota_exceeded',
    `[quota_exceeded] Key ${keyId} has used its ${name} quota of ${limit} calls today (UTC); nothing was done. ` +
      `It resets at ${reset.toISOString()} (in ${minutes} min). Try again then, or ask the operator to raise it ` +
      `(npm run keys -- update ${keyId} --quota ${name}=N/day).`,
  );
}

function pollError(keyId: string, max: number): ToolError {
  return new ToolError(
    'too_many_polls',
    `[too_many_polls] Key ${keyId} already has ${max} event_consume call${max === 1 ? '' : 's'} waiting, its limit (--max-polls ${max}); ` +
      'this poll was not started. Wait for one to return before polling again, or poll with a shorter wait.',
  );
}

/** Wraps every tool of a namespace so the caller's quotas and poll cap are enforced before it runs. */
export function meterTools(definition: NamespaceDefinition, options: MeterOptions): NamespaceDefinition {
  const namespace = definition.name;
  return {
    ...definition,
    tools: definition.tools.map((tool) => {
      const isLongPoll = namespace === LONG_POLL.namespace && tool.name === LONG_POLL.tool;
      const metered: typeof tool.handler = async (args, context) => {
        const limits = context.caller.limits;
        const keyId = context.caller.apiKeyId;
        // The poll cap first: a poll it refuses never ran, so it must not spend a daily quota.
        let slot = -1;
        if (isLongPoll && limits?.maxPolls !== undefined) {
          slot = options.table.slot(keyId);
          if (slot >= 0 && !options.table.enterPoll(slot, limits.maxPolls)) {
            options.observe?.({ kind: 'too_many_polls', namespace });
            throw pollError(keyId, limits.maxPolls);
          }
        }
        try {
          if (limits?.quotas) {
            // The namespace's quota and the tool's own (memory_write) both count this call.
            for (const name of [namespace, tool.name]) {
              const limit = limits.quotas[name];
              if (limit === undefined) continue;
              const taken = await options.store.takeQuota(keyId, utcDay(), name, limit);
              if (!taken.ok) {
                options.observe?.({ kind: 'quota_exceeded', namespace, quota: name });
                throw quotaError(keyId, name, limit);
              }
            }
          }
          return await tool.handler(args, context);
        } finally {
          if (slot >= 0) options.table.leavePoll(slot);
        }
      };
      return {
        ...tool,
        // A key with no quota and no poll cap here goes straight to the tool: an async wrapper
        // returning the tool's promise would add a promise and three turns of the microtask
        // queue to every call.
        handler: (args, context) => {
          const limits = context.caller.limits;
          if (!limits?.quotas && (!isLongPoll || limits?.maxPolls === undefined))
            return tool.handler(args, context);
          return metered(args, context);
        },
      };
    }),
  };
}
