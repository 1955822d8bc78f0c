/**
 * Runtime check of decoded frames. The link is a trust boundary (a TCP listener can be
 * reached by anything on the network), so each side validates the frame shape before it
 * looks at a field; a frame that fails is a protocol error and closes the link.
 */
import { z } from 'zod';
import type { IpcFrame, WorkerErrorCode, WorkerMethod } from './messages.ts';

const workerMethods = [
  'status',
  'publish',
  'consume',
  'settle',
  'topics',
  'createTopic',
  'deleteTopic',
  'metrics',
] as const satisfies readonly WorkerMethod[];

const workerErrorCodes = [
  'NOT_CONFIGURED',
  'NO_DEFAULT_TOPIC',
  'NO_DEFAULT_GROUP',
  'TOPIC_ADMIN_DISABLED',
  'UNKNOWN_TOPIC',
  'TOPIC_EXISTS',
  'TOPIC_RESERVED',
  'INVALID_ARGUMENT',
  'AUTHENTICATION_FAILED',
  'BROKER_ERROR',
  'DEADLINE_EXCEEDED',
  'CANCELLED',
  'OVERLOADED',
  'INTERNAL',
] as const satisfies readonly WorkerErrorCode[];

/** Every code in the union is listed above (checked at compile time in both directions). */
type MissingCode = Exclude<WorkerErrorCode, (typeof workerErrorCodes)[number]>;
const _allCodesListed: MissingCode extends never ? true : never = true;
void _allCodesListed;
type MissingMethod = Exclude<WorkerMethod, (typeof workerMethods)[number]>;
const _allMethodsListed: MissingMethod extends never ? true : never = true;
void _allMethodsListed;

export const WORKER_METHODS: readonly WorkerMethod[] = workerMethods;

export function isWorkerMethod(value: string): value is WorkerMethod {
  return (workerMethods as readonly string[]).includes(value);
}

/** Ids are positive safe integers so both sides can key maps on them without surprises. */
const frameId = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

const frameSchema = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('hello'),
    version: z.number().int(),
    workerId: z.string().max(200).optional(),
    token: z.string().max(1000).optional(),
  }),
  z.object({
    t: z.literal('req'),
    id: frameId,
    method: z.enum(workerMethods),
    params: z.unknown(),
    deadlineMs: z.number().int().min(0),
    // A worker that predates the field drops it (zod strips unknown keys).
    trace: z
      .object({ traceparent: z.string().max(100), tracestate: z.string().max(512).optional() })
      .optional(),
  }),
  z.object({ t: z.literal('cancel'), id: frameId, answerNow: z.literal(true).optional() }),
  z.object({ t: z.literal('ping'), n: z.number().int().min(0) }),
  z.object({ t: z.literal('pong'), n: z.number().int().min(0) }),
  z.object({ t: z.literal('res'), id: frameId, result: z.unknown() }),
  z.object({
    t: z.literal('err'),
    id: frameId,
    error: z.object({ code: z.enum(workerErrorCodes), message: z.string(), retriable: z.boolean() }),
  }),
]);

/** The frame, or a sentence saying what is wrong with it. */
export function parseFrame(value: unknown): { ok: true; frame: IpcFrame } | { ok: false; problem: string } {
  const parsed = frameSchema.safeParse(value);
  if (parsed.success) return { ok: true, frame: parsed.data as IpcFrame };
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  return { ok: false, problem: `malformed IPC frame${where}: ${issue?.message ?? 'invalid'}` };
}
