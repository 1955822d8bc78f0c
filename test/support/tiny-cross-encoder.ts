/**
 * A tiny BERT cross-encoder written from scratch for tests: random weights from a seeded
 * generator, but every file and shape a Hugging Face BertForSequenceClassification
 * checkpoint has (tokenizer.json with a WordPiece model, config.json, model.safetensors with
 * `bert.…` encoder weights, the pooler and a one-label classifier). Two layers of width 32:
 * the loading, tokenizing, batching and scoring code runs in CI in milliseconds, and no real
 * reranker weights are needed (none are reachable here).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const TINY_CONFIG = {
  architectures: ['BertForSequenceClassification'],
  model_type: 'bert',
  hidden_size: 32,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  intermediate_size: 64,
  hidden_act: 'gelu',
  layer_norm_eps: 1e-12,
  max_position_embeddings: 64,
  type_vocab_size: 2,
  id2label: { '0': 'LABEL_0' },
  label2id: { LABEL_0: 0 },
};

const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
const WORDS = (
  'the a an of to in on and is are was for at after before every any need needs check ' +
  'deploy deploys staging cluster clusters friday monday mondays review runs frankfurt berlin ' +
  'we mobile app upgrades notes live team wiki where does user lives moved apartment denver ' +
  'city home quarterly revenue report due'
).split(' ');
const PIECES = [
  '##s',
  '##ed',
  '##ing',
  ...'abcdefghijklmnopqrstuvwxyz'.split(''),
  ...'abcdefghijklmnopqrstuvwxyz'.split('').map((c) => `##${c}`),
  '.',
  ',',
];

export function tinyVocab(): Record<string, number> {
  const tokens = [...SPECIAL, ...new Set([...WORDS, ...PIECES])];
  return Object.fromEntries(tokens.map((token, id) => [token, id]));
}

/** The tokenizer.json `tokenizers` writes for an uncased BERT, cut down to what is read. */
export function tinyTokenizerJson(vocab = tinyVocab()) {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((content, id) => ({ id, content, special: true })),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
    },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab,
    },
  };
}

/** mulberry32: the same weights on every machine and every run. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function tinyWeights(vocabSize: number, seed: number): Map<string, { shape: number[]; data: Float32Array }> {
  const random = generator(seed);
  const weights = new Map<string, { shape: number[]; data: Float32Array }>();
  const { hidden_size: h, intermediate_size: inner, max_position_embeddings: positions } = TINY_CONFIG;
  const tensor = (name: string, shape: number[], make: () => number) => {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; i++) data[i] = make();
    weights.set(name, { shape, data });
  };
  const noise = (scale: number) => () => (random() * 2 - 1) * scale;
  const linear = (name: string, out: number, input: number) => {
    tensor(`${name}.weight`, [out, input], noise(0.3));
    tensor(`${name}.bias`, [out], noise(0.05));
  };
  const layerNorm = (name: string) => {
    tensor(`${name}.weight`, [h], () => 1 + (random() * 2 - 1) * 0.1);
    tensor(`${name}.bias`, [h], noise(0.05));
  };
  tensor('bert.embeddings.word_embeddings.weight', [vocabSize, h], noise(1));
  tensor('bert.embeddings.position_embeddings.weight', [positions, h], noise(0.2));
  tensor('bert.embeddings.token_type_embeddings.weight', [2, h], noise(0.5));
  layerNorm('bert.embeddings.LayerNorm');
  for (let layer = 0; layer < TINY_CONFIG.num_hidden_layers; layer++) {
    const p = `bert.encoder.layer.${layer}`;
    for (const part of ['query', 'key', 'value']) linear(`${p}.attention.self.${part}`, h, h);
    linear(`${p}.attention.output.dense`, h, h);
    layerNorm(`${p}.attention.output.LayerNorm`);
    linear(`${p}.intermediate.dense`, inner, h);
    linear(`${p}.output.dense`, h, inner);
    layerNorm(`${p}.output.LayerNorm`);
  }
  linear('bert.pooler.dense', h, h);
  tensor('classifier.weight', [1, h], noise(1));
  tensor('classifier.bias', [1], noise(0.1));
  return weights;
}

/** The safetensors layout: u64 header length, JSON header (padded to 8 bytes), raw little-endian data. */
export function safetensorsBytes(weights: Map<string, { shape: number[]; data: Float32Array }>): Buffer {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const [name, { shape, data }] of weights) {
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + data.byteLength] };
    offset += data.byteLength;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([
    length,
    Buffer.from(json, 'utf8'),
    ...[...weights.values()].map(({ data }) => Buffer.from(data.buffer, data.byteOffset, data.byteLength)),
  ]);
}

/** Writes tokenizer.json, config.json and model.safetensors into `dir`. */
export async function writeTinyCrossEncoder(dir: string, seed = 7): Promise<void> {
  await mkdir(dir, { recursive: true });
  const vocab = tinyVocab();
  await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson(vocab)));
  await writeFile(
    join(dir, 'config.json'),
    JSON.stringify({ ...TINY_CONFIG, vocab_size: Object.keys(vocab).length }),
  );
  await writeFile(
    join(dir, 'model.safetensors'),
    safetensorsBytes(tinyWeights(Object.keys(vocab).length, seed)),
  );
}
