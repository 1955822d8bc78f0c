/**
 * Builds the ONNX graph of a BERT encoder with mean pooling from its safetensors weights,
 * once, at setup. Standard operators only (opset 17), so onnxruntime's own optimiser fuses
 * LayerNorm, GELU and attention for whatever CPU it runs on.
 *
 * Inputs: input_ids and attention_mask, int64 [batch, sequence]. Outputs:
 * last_hidden_state [batch, sequence, hidden] and sentence_embedding [batch, hidden], the
 * mask-weighted mean of the tokens, L2-normalised (what sentence-transformers returns for
 * all-MiniLM-L6-v2). Padding contributes nothing to either.
 */
import { endianness } from 'node:os';
import { GRAPH_VERSION } from './files.ts';
import {
  type Attribute,
  DataType,
  modelProto,
  nodeProto,
  tensorProto,
  valueInfoProto,
} from './onnx-proto.ts';
import type { Tensor } from './safetensors.ts';

export interface BertConfig {
  hidden_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  intermediate_size: number;
  layer_norm_eps: number;
  hidden_act: string;
  type_vocab_size: number;
}

class GraphBuilder {
  readonly nodes: Uint8Array[] = [];
  readonly initializers: Uint8Array[] = [];
  private count = 0;

  op(type: string, inputs: string[], attributes?: Record<string, Attribute>): string {
    const name = `${type.toLowerCase()}_${this.count++}`;
    this.nodes.push(nodeProto(type, inputs, [name], name, attributes));
    return name;
  }

  /** Names one operator's output explicitly (graph outputs). */
  named(type: string, inputs: string[], output: string, attributes?: Record<string, Attribute>): string {
    this.nodes.push(nodeProto(type, inputs, [output], `${output}_node`, attributes));
    return output;
  }

  floats(name: string, dims: number[], data: Float32Array): string {
    this.initializers.push(
      tensorProto(name, DataType.FLOAT, dims, new Uint8Array(data.buffer, data.byteOffset, data.byteLength)),
    );
    return name;
  }

  ints(name: string, values: number[]): string {
    const data = BigInt64Array.from(values.map(BigInt));
    this.initializers.push(tensorProto(name, DataType.INT64, [values.length], new Uint8Array(data.buffer)));
    return name;
  }
}

/** PyTorch's Linear keeps weights as [out, in]; MatMul wants [in, out]. */
function transposed({ shape, data }: Tensor): Float32Array {
  const [rows, cols] = shape as [number, number];
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c]!;
  return out;
}

/** A graph builder that also knows the model's weights and the BERT building blocks made from them. */
export class BertGraphBuilder extends GraphBuilder {
  readonly config: BertConfig;
  private readonly weights: Map<string, Tensor>;

  constructor(weights: Map<string, Tensor>, config: BertConfig) {
    super();
    this.weights = weights;
    this.config = config;
  }

  weight(name: string): Tensor {
    const found = this.weights.get(name);
    if (!found) throw new Error(`the weights have no ${name}`);
    return found;
  }

  scalar(name: string, value: number): string {
    return this.floats(name, [], Float32Array.of(value));
  }

  linear(input: string, prefix: string): string {
    const w = this.weight(`${prefix}.weight`);
    const wt = this.floats(`${prefix}.weight_t`, [w.shape[1]!, w.shape[0]!], transposed(w));
    const bias = this.floats(`${prefix}.bias`, [w.shape[0]!], this.weight(`${prefix}.bias`).data);
    return this.op('Add', [this.op('MatMul', [input, wt]), bias]);
  }

  layerNorm(input: string, prefix: string): string {
    const hidden = this.config.hidden_size;
    return this.op(
      'LayerNormalization',
      [
        input,
        this.floats(`${prefix}.weight`, [hidden], this.weight(`${prefix}.weight`).data),
        this.floats(`${prefix}.bias`, [hidden], this.weight(`${prefix}.bias`).data),
      ],
      { axis: -1, epsilon: { float: this.config.layer_norm_eps } },
    );
  }
}

/** The constant tensors the graph's operators share. */
export interface Constants {
  one: string;
  half: string;
  sqrt2: string;
  attentionScale: string;
  maskedOut: string;
  /** Only in a mean-pooled graph: onnxruntime warns at every load about an initializer no node reads. */
  epsilon: string;
  zero: string;
  splitHeads: string;
  mergeHeads: string;
}

export function addConstants(g: BertGraphBuilder, { pooling = true } = {}): Constants {
  const hidden = g.config.hidden_size;
  const heads = g.config.num_attention_heads;
  const headSize = hidden / heads;
  return {
    one: g.scalar('one', 1),
    half: g.scalar('half', 0.5),
    sqrt2: g.scalar('sqrt2', Math.SQRT2),
    attentionScale: g.scalar('attention_scale', Math.sqrt(headSize)),
    // A large negative bias, not -inf: a row of -inf would make softmax NaN.
    maskedOut: g.scalar('masked_out', -10000),
    epsilon: pooling ? g.scalar('pool_epsilon', 1e-9) : '',
    zero: g.ints('zero_1d', [0]),
    splitHeads: g.ints('split_heads', [0, 0, heads, headSize]),
    mergeHeads: g.ints('merge_heads', [0, 0, hidden]),
  };
}

/** Embeddings: word + position (the first `sequence` rows) + token type 0 (single-text input). */
function addEmbeddings(g: BertGraphBuilder, { zero }: Constants): string {
  const hidden = g.config.hidden_size;
  const wordTable = g.weight('embeddings.word_embeddings.weight');
  const positionTable = g.weight('embeddings.position_embeddings.weight');
  const words = g.op('Gather', [g.floats('word_embeddings', wordTable.shape, wordTable.data), 'input_ids']);
  const sequence = g.op('Shape', ['input_ids'], { start: 1, end: 2 });
  const positions = g.op('Slice', [
    g.floats('position_embeddings', positionTable.shape, positionTable.data),
    zero,
    sequence,
    zero,
  ]);
  const typeZero = g.floats(
    'token_type_0',
    [hidden],
    g.weight('embeddings.token_type_embeddings.weight').data.slice(0, hidden),
  );
  return g.layerNorm(g.op('Add', [g.op('Add', [words, typeZero]), positions]), 'embeddings.LayerNorm');
}

/** The float mask and, from it, the attention bias [batch, 1, 1, sequence]: 0 on tokens, -10000 on padding. */
export function addAttentionMask(
  g: BertGraphBuilder,
  { one, maskedOut }: Constants,
): { mask: string; bias: string } {
  const mask = g.op('Cast', ['attention_mask'], { to: DataType.FLOAT });
  const bias = g.op('Unsqueeze', [
    g.op('Mul', [g.op('Sub', [one, mask]), maskedOut]),
    g.ints('mask_axes', [1, 2]),
  ]);
  return { mask, bias };
}

/** Multi-head self-attention with its residual and LayerNorm. */
export function addAttention(
  g: BertGraphBuilder,
  c: Constants,
  state: string,
  maskBias: string,
  p: string,
): string {
  const heads4d = (input: string, perm: number[]) =>
    g.op('Transpose', [g.op('Reshape', [input, c.splitHeads])], { perm });
  const q = heads4d(g.linear(state, `${p}.attention.self.query`), [0, 2, 1, 3]);
  const k = heads4d(g.linear(state, `${p}.attention.self.key`), [0, 2, 3, 1]);
  const v = heads4d(g.linear(state, `${p}.attention.self.value`), [0, 2, 1, 3]);
  const scores = g.op('Add', [g.op('Div', [g.op('MatMul', [q, k]), c.attentionScale]), maskBias]);
  const context = g.op('MatMul', [g.op('Softmax', [scores], { axis: -1 }), v]);
  const merged = g.op('Reshape', [g.op('Transpose', [context], { perm: [0, 2, 1, 3] }), c.mergeHeads]);
  return g.layerNorm(
    g.op('Add', [g.linear(merged, `${p}.attention.output.dense`), state]),
    `${p}.attention.output.LayerNorm`,
  );
}

/** The feed-forward block with its residual and LayerNorm. */
export function addFeedForward(
  g: BertGraphBuilder,
  { sqrt2, one, half }: Constants,
  attended: string,
  p: string,
): string {
  // GELU in its exact erf form, as BERT was trained: x · ½ · (1 + erf(x / √2)).
  const inner = g.linear(attended, `${p}.intermediate.dense`);
  const erf = g.op('Erf', [g.op('Div', [inner, sqrt2])]);
  const gelu = g.op('Mul', [g.op('Mul', [inner, g.op('Add', [erf, one])]), half]);
  return g.layerNorm(g.op('Add', [g.linear(gelu, `${p}.output.dense`), attended]), `${p}.output.LayerNorm`);
}

/** Mean over real tokens, then unit length. */
function addMeanPooling(g: BertGraphBuilder, { epsilon }: Constants, last: string, mask: string): void {
  const tokenMask = g.op('Unsqueeze', [mask, g.ints('pool_axes', [2])]);
  const sequenceAxis = g.ints('sequence_axis', [1]);
  const summed = g.op('ReduceSum', [g.op('Mul', [last, tokenMask]), sequenceAxis], { keepdims: 0 });
  const counted = g.op('Max', [g.op('ReduceSum', [mask, sequenceAxis], { keepdims: 1 }), epsilon]);
  g.named('LpNormalization', [g.op('Div', [summed, counted])], 'sentence_embedding', { axis: -1, p: 2 });
}

function serialized(g: BertGraphBuilder): Uint8Array {
  const hidden = g.config.hidden_size;
  return modelProto({
    name: 'bert_mean_pooled',
    doc: `BERT encoder with mean pooling, built by mcp-event-gateway (graph version ${GRAPH_VERSION})`,
    producer: 'mcp-event-gateway',
    irVersion: 8,
    opset: 17,
    nodes: g.nodes,
    initializers: g.initializers,
    inputs: [
      valueInfoProto('input_ids', DataType.INT64, ['batch', 'sequence']),
      valueInfoProto('attention_mask', DataType.INT64, ['batch', 'sequence']),
    ],
    outputs: [
      valueInfoProto('last_hidden_state', DataType.FLOAT, ['batch', 'sequence', hidden]),
      valueInfoProto('sentence_embedding', DataType.FLOAT, ['batch', hidden]),
    ],
  });
}

export function buildBertGraph(weights: Map<string, Tensor>, config: BertConfig): Uint8Array {
  if (endianness() !== 'LE') throw new Error('ONNX raw tensor data is little-endian; this machine is not');
  if (config.hidden_act !== 'gelu') throw new Error(`unsupported activation ${config.hidden_act}`);
  const g = new BertGraphBuilder(weights, config);
  const constants = addConstants(g);
  let state = addEmbeddings(g, constants);
  const mask = addAttentionMask(g, constants);
  for (let layer = 0; layer < config.num_hidden_layers; layer++) {
    const p = `encoder.layer.${layer}`;
    state = addFeedForward(g, constants, addAttention(g, constants, state, mask.bias, p), p);
  }
  const last = g.named('Identity', [state], 'last_hidden_state');
  addMeanPooling(g, constants, last, mask.mask);
  return serialized(g);
}
