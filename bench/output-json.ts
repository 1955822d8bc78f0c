/**
 * What a capabilities answer's writer (gateway/mcp/capabilities-splice.ts: the catalogue and
 * error codes encoded once, the rest JSON.stringify's) saves against JSON.stringify twice, the
 * output's JSON and that JSON quoted, which a 2025-era answer needs. Timed in this process,
 * the two alternating in rounds, medians of the rounds; a busy machine slows both alike.
 *
 * Decision 0902 used this file's earlier form, which also timed a general one-walk writer on
 * every tool's output (bench/results/tool-calls-2026-11-29T0455.json holds those figures).
 */
import { compileNamespace } from '../gateway/mcp/namespace.ts';
import { mountedDefinition, mountNamespace } from '../gateway/mcp/namespace-mount.ts';
import { eventNamespace } from '../gateway/namespaces/event/index.ts';

export interface WriterFigures {
  tool: string;
  outputBytes: number;
  /** µs per output: JSON.stringify then JSON.stringify of that text. */
  nativeSameUs: number;
  /** µs per output: the tool's own writer (its outputJson). */
  writerSameUs: number;
  nativeFreshUs: number;
  writerFreshUs: number;
}

const CALLS_PER_ROUND = 200;
const ROUNDS = 15;

const native = (value: unknown) => {
  const json = JSON.stringify(value);
  return JSON.stringify(json).length + json.length;
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** µs per call of each writer over `outputs` (cycled), alternating which goes first each round. */
function timeWriters(
  outputs: unknown[],
  viaWriter: (value: unknown) => number,
): { nativeUs: number; writerUs: number } {
  const rounds = { native: [] as number[], writer: [] as number[] };
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
      rounds.writer.push(run(viaWriter));
    } else {
      rounds.writer.push(run(viaWriter));
      rounds.native.push(run(native));
    }
  }
  if (sink < 0) throw new Error('unreachable: keeps the writes from being optimised away');
  const round2 = (n: number) => Math.round(n * 100) / 100;
  return { nativeUs: round2(median(rounds.native)), writerUs: round2(median(rounds.writer)) };
}

/**
 * event_capabilities' real output (its catalogue and error codes are the fixed arrays the
 * writer recognises by identity, which a JSON round trip would replace), from the event
 * namespace mounted in this process with a worker that answers `status`. `same` reuses one
 * output; `fresh` is a new output each call around the same fixed parts, as the handler returns.
 */
export async function capabilitiesFigures(): Promise<WriterFigures> {
  const status = { configured: true, brokerConfigured: true, brokerReachable: true, missingSettings: [] };
  const broker = { call: () => Promise.resolve(status) };
  const namespace = compileNamespace(
    await mountedDefinition(mountNamespace(eventNamespace, {}, { broker } as never)),
  );
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
    writerSameUs: same.writerUs,
    nativeFreshUs: fresh.nativeUs,
    writerFreshUs: fresh.writerUs,
  };
}
