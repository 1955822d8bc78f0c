/**
 * Runtime check of decoded frames. The link is a trust boundary (a TCP listener can be
 * reached by anything on the network), so each side validates the frame shape before it
 * looks at a field; a frame that fails is a protocol error and closes the link.
 *
 * Written by hand rather than with zod: it runs on every frame in both directions (a zod
 * discriminated union was the largest single cost of a frame in the worker's profile), and
 * it keeps zod out of the idle worker (about 4 MiB resident).
 */
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

type Fields = Record<string, unknown>;
/** Why a field is wrong, or null when it is right. */
type Check = (value: unknown) => string | null;

const isObject = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const integer =
  (min: number, max = Number.MAX_SAFE_INTEGER): Check =>
  (value) =>
    typeof value !== 'number' || !Number.isInteger(value)
      ? 'expected an integer'
      : value < min || value > max
        ? `expected an integer from ${min} to ${max}`
        : null;
const anyInteger: Check = (value) =>
  typeof value === 'number' && Number.isInteger(value) ? null : 'expected an integer';
const text =
  (max = Number.POSITIVE_INFINITY): Check =>
  (value) =>
    typeof value !== 'string' ? 'expected a string' : value.length > max ? `longer than ${max}` : null;
const oneOf =
  (allowed: readonly string[]): Check =>
  (value) =>
    typeof value === 'string' && allowed.includes(value) ? null : `expected one of ${allowed.join(', ')}`;
const boolean: Check = (value) => (typeof value === 'boolean' ? null : 'expected a boolean');
const literalTrue: Check = (value) => (value === true ? null : 'expected true');
const anything: Check = () => null;
const optional =
  (check: Check): Check =>
  (value) =>
    value === undefined ? null : check(value);
/** Ids are positive safe integers so both sides can key maps on them without surprises. */
const frameId = integer(1);

/**
 * An object with these fields, copied without any other key (a newer peer's extra fields
 * are dropped, as zod's objects did). `at` is the field's path for the problem sentence.
 */
function fieldsOf(
  value: unknown,
  shape: Record<string, Check | Record<string, Check>>,
  at: string,
): { ok: true; value: Fields } | { ok: false; problem: string } {
  if (!isObject(value)) return { ok: false, problem: `${at}expected an object` };
  const out: Fields = {};
  for (const [name, check] of Object.entries(shape)) {
    const field = value[name];
    if (typeof check === 'function') {
      const problem = check(field);
      if (problem) return { ok: false, problem: `${at}${name}: ${problem}` };
      if (field !== undefined || name in value) out[name] = field;
    } else {
      const nested = fieldsOf(field, check, `${at}${name}.`);
      if (!nested.ok) return nested;
      out[name] = nested.value;
    }
  }
  return { ok: true, value: out };
}

const traceShape = { traceparent: text(100), tracestate: optional(text(512)) };

const SHAPES: Record<IpcFrame['t'], Record<string, Check | Record<string, Check>>> = {
  hello: { t: anything, version: anyInteger, workerId: optional(text(200)), token: optional(text(1000)) },
  req: {
    t: anything,
    id: frameId,
    method: oneOf(workerMethods),
    params: anything,
    deadlineMs: integer(0),
    // A worker that predates the field drops it (unknown keys are not copied).
    trace: anything,
  },
  cancel: { t: anything, id: frameId, answerNow: optional(literalTrue) },
  ping: { t: anything, n: integer(0) },
  pong: { t: anything, n: integer(0) },
  res: { t: anything, id: frameId, result: anything },
  err: {
    t: anything,
    id: frameId,
    error: { code: oneOf(workerErrorCodes), message: text(), retriable: boolean },
  },
};

/** The frame, or a sentence saying what is wrong with it. */
export function parseFrame(value: unknown): { ok: true; frame: IpcFrame } | { ok: false; problem: string } {
  const malformed = (problem: string) => ({ ok: false as const, problem: `malformed IPC frame ${problem}` });
  if (!isObject(value)) return malformed('(expected an object)');
  const kind = value.t;
  const shape =
    typeof kind === 'string' && Object.hasOwn(SHAPES, kind) ? SHAPES[kind as IpcFrame['t']] : null;
  if (!shape) return malformed(`at t: unknown frame type ${JSON.stringify(kind) ?? 'undefined'}`);
  const parsed = fieldsOf(value, shape, 'at ');
  if (!parsed.ok) return malformed(parsed.problem);
  const frame = parsed.value;
  if (kind === 'req' && frame.trace !== undefined) {
    const trace = fieldsOf(frame.trace, traceShape, 'at trace.');
    if (!trace.ok) return malformed(trace.problem);
    frame.trace = trace.value;
  }
  return { ok: true, frame: frame as unknown as IpcFrame };
}
