/**
 * tools/call on the tools agents call most, in both protocol eras, each beside a bare uWS
 * server answering the very bytes the gateway answered (bench/eras.ts's paired rounds), with
 * event_capabilities (the eras rows' call) beside them:
 *
 * - memory_get and memory_search on SQLite, the key holding 10,000 memories (WordNet
 *   definitions written through memory_write first). memory_get also runs on a floor server
 *   (bench/servers/memory-get-floor.ts: the tool's work alone, on the gateway's own file and
 *   code, the same bytes), which splits its gap to bare uWS. Embeddings are off, so memory_search
 *   runs its keyword arm: a query embedding would put the embedder's time in the row, and
 *   the embedders have their own bench.
 * - event_publish, its worker answered in process by the bench gateway (as
 *   event_capabilities' status is), so the row is the gateway's work: stamp, sign, validate,
 *   encode. The worker and Kafka have their rows in the event bench.
 * - skills_get against the GitHub contract server the skills tests use, in this process.
 *
 * `npm run bench -- tools [--quick]` runs this alone and writes bench/results/tool-calls.json;
 * a full `npm run bench` puts the rows in latest.json.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startGitHubContract } from '../test/support/contracts/github.ts';
import { fixtureRepos, GITHUB_TOKEN } from '../test/support/skills-fixture.ts';
import { benchRoot, startChild } from './child.ts';
import { type EraRow, type PairedSpec, pairedRounds } from './eras.ts';
import { machineInfo } from './machine.ts';
import { callTool, toolsCallBody } from './mcp-call.ts';
import { memoryText, wordnetSynsets } from './memory-data.ts';
import { capabilitiesFigures, type WriterFigures } from './output-json.ts';

const MEMORIES = 10_000;
/** A query whose words are common in WordNet definitions, so the keyword arm has work to rank. */
const SEARCH_QUERY = 'a small domesticated animal kept in the house';

/** Writes `count` memories through memory_write, 16 at a time, and checks they were all stored. */
async function fillMemories(url: string, key: string, count: number): Promise<string> {
  const texts = wordnetSynsets()
    .slice(0, count)
    .map((synset) => memoryText(synset));
  const first = await callTool<{ id: string }>(url, key, 'memory_write', { content: texts[0]! });
  let n = 0;
  const result = await autocannon({
    url,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-api-key': key,
    },
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          body: toolsCallBody('memory_write', { content: texts[1 + (n++ % (count - 1))]! }),
        }),
      },
    ],
    connections: 16,
    amount: count - 1,
  });
  const stats = await callTool<{ count: number }>(url, key, 'memory_stats', {});
  if (result.non2xx > 0 || stats.count < count) {
    throw new Error(`memory fill: ${stats.count} of ${count} stored, ${result.non2xx} non-2xx`);
  }
  return first.id;
}

export async function benchToolCalls(
  durationSeconds: number,
  rounds: number,
  log: (line: string) => void,
): Promise<{ rows: EraRow[]; writers: WriterFigures[] }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-bench-tools-'));
  const github = await startGitHubContract(fixtureRepos('http://127.0.0.1:9'), GITHUB_TOKEN);
  const gateway = await startChild('bench/servers/gateway.ts', {
    HTTP_ENGINE: 'uws',
    DATA_DIR: dataDir,
    MEMORY_EMBEDDINGS: 'none',
    MEMORY_MAX_PER_KEY: String(MEMORIES * 2),
    GITHUB_API_URL: github.api.url,
    GITHUB_RAW_URL: github.raw.url,
    GITHUB_TOKEN,
    LOG_LEVEL: 'warn',
  });
  try {
    const base = `http://127.0.0.1:${gateway.info.port}`;
    const key = String(gateway.info.key);
    log(`tools: writing ${MEMORIES} memories for the key through memory_write`);
    const id = await fillMemories(`${base}/memory/mcp`, key, MEMORIES);
    const calls: Array<Omit<PairedSpec, 'method' | 'era' | 'key'>> = [
      // The eras rows' call, again here so its figures sit beside the others' in one file.
      { url: `${base}/event/mcp`, tool: 'event_capabilities', args: {} },
      {
        url: `${base}/memory/mcp`,
        tool: 'memory_get',
        args: { id },
        floor: {
          entry: 'bench/servers/memory-get-floor.ts',
          env: { DATA_DIR: dataDir, FLOOR_MEMORY_ID: id },
        },
      },
      { url: `${base}/memory/mcp`, tool: 'memory_search', args: { query: SEARCH_QUERY } },
      {
        url: `${base}/event/mcp`,
        tool: 'event_publish',
        args: { topic: 'bench', key: 'k', value: '{"n":1}' },
      },
      { url: `${base}/skills/mcp`, tool: 'skills_get', args: { source: 'acme/kit/skills/pdf-tools' } },
    ];
    const specs = calls.flatMap((call) =>
      (['legacy', 'modern'] as const).map((era) => ({ ...call, key, era, method: 'tools/call' as const })),
    );
    // Before the load: the writer is timed in this process, which autocannon also uses.
    const writers: WriterFigures[] = [await capabilitiesFigures()];
    log(`tools: output writers ${JSON.stringify(writers)}`);
    const rows = await pairedRounds(gateway.info.pid, specs, durationSeconds, rounds, log);
    return { rows, writers };
  } finally {
    await gateway.stop();
    await github.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** `npm run bench -- tools [--quick]`: the rows alone, written to bench/results/tool-calls.json. */
export async function runToolCallsSection(quick: boolean, log: (line: string) => void): Promise<EraRow[]> {
  const started = Date.now();
  const loadBefore = loadavg().map((n) => Math.round(n * 100) / 100);
  const { rows, writers } = await benchToolCalls(quick ? 2 : 3, quick ? 1 : 5, log);
  const results = {
    run: {
      mode: quick ? 'quick' : 'full',
      part: 'tools',
      date: new Date().toISOString(),
      seconds: Math.round((Date.now() - started) / 1000),
      machine: machineInfo(),
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadavg().map((n) => Math.round(n * 100) / 100),
    },
    workload: `tools/call, 64 connections, ${quick ? '1 round of 2 s' : '5 paired rounds of 3 s'} per side; memory: SQLite, ${MEMORIES} memories for the key, embeddings off`,
    toolCalls: rows,
    outputWriters: writers,
  };
  // Quick runs are written too (their mode is in the file): on the shared 2-core machine a
  // full run of every section is not always possible, and a figure needs its file.
  const file = join(benchRoot, 'bench', 'results', 'tool-calls.json');
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote ${file}`);
  return rows;
}
