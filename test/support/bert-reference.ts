/**
 * A BERT forward pass in plain loops, written from the architecture alone, with nothing
 * shared with the ONNX graph builder: it reads the safetensors file itself, keeps PyTorch's
 * [out, in] weight layout, and accumulates in doubles. The ONNX graph must agree with it;
 * any mis-wired transpose, head split, mask or GELU would not.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Config {
  hidden_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  layer_norm_eps: number;
}

function loadWeights(file: string): Map<string, Float32Array> {
  const bytes = readFileSync(file);
  const length = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.toString('utf8', 8, 8 + length)) as Record<
    string,
    { dtype: string; data_offsets: [number, number] }
  >;
  const weights = new Map<string, Float32Array>();
  for (const [name, entry] of Object.entries(header)) {
    if (entry.dtype !== 'F32') continue;
    const [from, to] = entry.data_offsets;
    const values = new Float32Array((to - from) / 4);
    for (let i = 0; i < values.length; i++) values[i] = bytes.readFloatLE(8 + length + from + i * 4);
    weights.set(name, values);
  }
  return weights;
}

/**
 * erf by its Maclaurin series (|x| < 3) or its asymptotic continued fraction; both to about
 * 1e-12, far inside the comparison's 1e-4 (JavaScript has no Math.erf).
 */
export function erf(x: number): number {
  const a = Math.abs(x);
  let result: number;
  if (a < 3) {
    let term = a;
    let sum = a;
    for (let n = 1; n < 100; n++) {
      term *= (-a * a) / n;
      const next = term / (2 * n + 1);
      sum += next;
      if (Math.abs(next) < 1e-17) break;
    }
    result = (2 / Math.sqrt(Math.PI)) * sum;
  } else {
    let fraction = 0;
    for (let k = 60; k >= 1; k--) fraction = k / 2 / (a + fraction);
    result = 1 - Math.exp(-a * a) / Math.sqrt(Math.PI) / (a + fraction);
  }
  return x < 0 ? -result : result;
}

export class BertReference {
  private readonly w: Map<string, Float32Array>;
  private readonly config: Config;

  constructor(dir: string) {
    this.w = loadWeights(join(dir, 'model.safetensors'));
    this.config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Config;
  }

  private get(name: string): Float32Array {
    // A sequence-classification checkpoint keeps the encoder under `bert.`.
    const found = this.w.get(name) ?? this.w.get(`bert.${name}`);
    if (!found) throw new Error(`no weight ${name}`);
    return found;
  }

  /** y[t][o] = b[o] + Σ_i x[t][i] · W[o][i], with W stored [out, in] as PyTorch keeps it. */
  private linear(x: number[][], prefix: string): number[][] {
    const weight = this.get(`${prefix}.weight`);
    const bias = this.get(`${prefix}.bias`);
    const inputs = x[0]!.length;
    return x.map((row) => {
      const out = new Array<number>(bias.length);
      for (let o = 0; o < bias.length; o++) {
        let sum = bias[o]!;
        for (let i = 0; i < inputs; i++) sum += row[i]! * weight[o * inputs + i]!;
        out[o] = sum;
      }
      return out;
    });
  }

  private layerNorm(x: number[][], prefix: string): number[][] {
    const gamma = this.get(`${prefix}.weight`);
    const beta = this.get(`${prefix}.bias`);
    return x.map((row) => {
      const mean = row.reduce((a, b) => a + b, 0) / row.length;
      const variance = row.reduce((a, b) => a + (b - mean) ** 2, 0) / row.length;
      const scale = 1 / Math.sqrt(variance + this.config.layer_norm_eps);
      return row.map((v, i) => (v - mean) * scale * gamma[i]! + beta[i]!);
    });
  }

  /**
   * One unpadded sequence of token ids (and, for a sentence pair, its token types) → every
   * token's last hidden state and the pooled unit vector.
   */
  forward(ids: number[], typeIds?: number[]): { tokens: number[][]; pooled: number[] } {
    const hidden = this.config.hidden_size;
    const heads = this.config.num_attention_heads;
    const size = hidden / heads;
    const word = this.get('embeddings.word_embeddings.weight');
    const position = this.get('embeddings.position_embeddings.weight');
    const tokenType = this.get('embeddings.token_type_embeddings.weight');
    let x = ids.map((id, t) =>
      Array.from(
        { length: hidden },
        (_, h) =>
          word[id * hidden + h]! + tokenType[(typeIds?.[t] ?? 0) * hidden + h]! + position[t * hidden + h]!,
      ),
    );
    x = this.layerNorm(x, 'embeddings.LayerNorm');
    for (let layer = 0; layer < this.config.num_hidden_layers; layer++) {
      const p = `encoder.layer.${layer}`;
      const q = this.linear(x, `${p}.attention.self.query`);
      const k = this.linear(x, `${p}.attention.self.key`);
      const v = this.linear(x, `${p}.attention.self.value`);
      const context = ids.map(() => new Array<number>(hidden).fill(0));
      for (let head = 0; head < heads; head++) {
        const offset = head * size;
        for (let i = 0; i < ids.length; i++) {
          const scores = ids.map((_, j) => {
            let dot = 0;
            for (let d = 0; d < size; d++) dot += q[i]![offset + d]! * k[j]![offset + d]!;
            return dot / Math.sqrt(size);
          });
          const max = Math.max(...scores);
          const exps = scores.map((s) => Math.exp(s - max));
          const total = exps.reduce((a, b) => a + b, 0);
          for (let j = 0; j < ids.length; j++) {
            const weight = exps[j]! / total;
            for (let d = 0; d < size; d++) context[i]![offset + d]! += weight * v[j]![offset + d]!;
          }
        }
      }
      const attended = this.linear(context, `${p}.attention.output.dense`);
      const afterAttention = this.layerNorm(
        attended.map((row, t) => row.map((value, h) => value + x[t]![h]!)),
        `${p}.attention.output.LayerNorm`,
      );
      const inner = this.linear(afterAttention, `${p}.intermediate.dense`).map((row) =>
        row.map((value) => 0.5 * value * (1 + erf(value / Math.SQRT2))),
      );
      const output = this.linear(inner, `${p}.output.dense`);
      x = this.layerNorm(
        output.map((row, t) => row.map((value, h) => value + afterAttention[t]![h]!)),
        `${p}.output.LayerNorm`,
      );
    }
    const mean = Array.from(
      { length: hidden },
      (_, h) => x.reduce((sum, row) => sum + row[h]!, 0) / x.length,
    );
    const norm = Math.sqrt(mean.reduce((sum, value) => sum + value * value, 0));
    return { tokens: x, pooled: mean.map((value) => value / norm) };
  }

  /** A cross-encoder's logit: BERT's pooler (dense + tanh over [CLS]) and the one-label classifier. */
  classify(ids: number[], typeIds: number[]): number {
    const { tokens } = this.forward(ids, typeIds);
    const pooled = this.linear([tokens[0]!], 'pooler.dense')[0]!.map(Math.tanh);
    return this.linear([pooled], 'classifier')[0]![0]!;
  }
}
