import { z } from 'zod';
import type { SettleResult } from '../../shared/ipc/messages.ts';
import { type MethodContext, requireClients } from './context.ts';
import { parseParams } from './params.ts';

const leaseIds = z.array(z.string().min(1).max(100)).max(10_000);
const settleInput = z.object({ commit: leaseIds.default([]), rewind: leaseIds.default([]) }).strict();

/** The gateway reports which poll answers reached their callers (commit) and which did not (rewind). */
export async function settle(ctx: MethodContext, params: unknown): Promise<SettleResult> {
  const input = parseParams(settleInput, params);
  return requireClients(ctx).consumers.settle(input.commit, input.rewind);
}
