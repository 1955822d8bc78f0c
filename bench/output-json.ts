/**
 * What the one-walk JSON writer (gateway/mcp/json-twice.ts) would save if every tool's output
 * went through it, on the outputs the tools really answer (captured from the gateway by
 * tool-calls.ts). A 2025-era answer needs the output's JSON and that JSON quoted; natively
 * that is JSON.stringify twice. Two cases per output, because the writer remembers strings:
 *
 * - `same`: the same output every call (a repeated memory_get of one id: every string is
 *   remembered after the first call, the writer's best case);
 * - `fresh`: every call a different output of the same shape (each string suffixed with a
 *   call number, 2,048 of them, more than the 1,024 strings the writer remembers), as varied
 *   traffic is.
 *
 * Timed in this process, the two writers alternating in rounds, medians of the rounds; a
 * busy machine slows both alike.
 */
import { jsonTwice } from '../gateway/mcp/json-twice.ts';
import { compileNamespace } from '../gateway/mcp/namespace.ts';
import { mountNamespace } from '../gateway/mcp/namespace-mount.ts';
import { eventNamespace } from '../gateway/namespaces/event/index.ts';

export interface WriterFigures {
  tool: string;
  outputBytes: number;
  /** µs per output: JSON.stringify then JSON.stringify of that text. */
  nativeSameUs: number;
  twiceSameUs: number;
  nativeFreshUs: number;
  twiceFreshUs: number;
}

const VARIANTS = 2048;
const CALLS_PER_ROUND = 200;
const ROUNDS = 15;

function withSuffix(value: unknown, suffix: string): unknown {
  if (typeof value === 'string') return `${value} ${suffix}`;
  if (Array.isArray(value)) return value.map((item) => withSuffix(item, suffix));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withSuffix(v, suffix)]));
  return value;
}

const native = (value: unknown) => {
  const json = JSON.stringify(value);
  return JSON.stringify(json).length + json.length;
};
const twice = (value: unknown) => {
  const { json, quoted } = jsonTwice(value);
  return json.length + quoted.length;
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** µs per call of each writer over `outputs` (cycled), alternating which goes first each round. */
function timeWriters(outputs: unknown[], viaWriter = twice): { nativeUs: number; twiceUs: number } {
  const rounds = { native: [] as number[], twice: [] as number[] };
  let sink = 0;
  let next = 0;
  const run = (write: (value: unknown) => number) => {
    const started = performance.now();
    for (let i = 0; i < CALLS_PER_ROUND; i++) sink += write(outputs[next++ % outputs.length]);
    return ((performance.now() - started) * 1000) / CALLS_PER_ROUND;
  };
  run(native); // warm-up: both compiled before the first timed round
  run(viaWriter);
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      rounds.native.push(run(native));
      rounds.twice.push(run(viaWriter));
    } else {
      rounds.twice.push(run(viaWriter));
      rounds.native.push(run(native));
    }
  }
  if (sink < 0) throw new Error('unreachable: keeps the writes from being optimised away');
  const round2 = (n: number) => Math.round(n * 100) / 100;
  return { nativeUs: round2(median(rounds.native)), twiceUs: round2(median(rounds.twice)) };
}

export function compareWriters(tool: string, output: unknown): WriterFigures {
  const same = timeWriters([output]);
  const fresh = timeWriters(Array.from({ length: VARIANTS }, (_, i) => withSuffix(output, `#${i}`)));
  return {
    tool,
    outputBytes: Buffer.byteLength(JSON.stringify(output)),
    nativeSameUs: same.nativeUs,
    twiceSameUs: same.twiceUs,
    nativeFreshUs: fresh.nativeUs,
    twiceFreshUs: fresh.twiceUs,
  };
}

/**
 * event_capabilities, the one tool that uses the writer today: its real output (the frozen
 * catalogue and error codes inside, which a JSON round trip would thaw), from the event
 * namespace mounted in this process with a worker that answers `status`. `fresh` here is a
 * new top-level object each call around the same frozen parts, as the handler returns.
 */
export async function capabilitiesFigures(): Promise<WriterFigures> {
  const status = { configured: true, brokerConfigured: true, brokerReachable: true, missingSettings: [] };
  const broker = { call: () => Promise.resolve(status) };
  const namespace = compileNamespace(mountNamespace(eventNamespace, {}, { broker } as never));
  const tool = namespace.tools.get('event_capabilities')!;
  const context = { caller: { apiKeyId: 'bench' }, requestId: 'bench' } as never;
  const output = await tool.handler({}, context);
  const outputs = await Promise.all(Array.from({ length: 64 }, () => tool.handler({}, context)));
  const viaTool = (value: unknown) => {
    const { json, quoted } = tool.outputJson!(value);
    return json.length + quoted.length;
  };
  const same = timeWriters([output], viaTool);
  const fresh = timeWriters(outputs, viaTool);
  return {
    tool: 'event_capabilities',
    outputBytes: Buffer.byteLength(JSON.stringify(output)),
    nativeSameUs: same.nativeUs,
    twiceSameUs: same.twiceUs,
    nativeFreshUs: fresh.nativeUs,
    twiceFreshUs: fresh.twiceUs,
  };
}
