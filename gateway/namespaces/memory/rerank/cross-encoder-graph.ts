/**
 * Builds the ONNX graph of a BERT cross-encoder (Hugging Face BertForSequenceClassification
 * with one label, as cross-encoder/ms-marco-MiniLM-L-6-v2 is) from its safetensors weights.
 * The encoder layers are the MiniLM embedder's own (minilm/graph.ts); what differs is the
 * input (a query–document pair with token_type_ids) and the head: the [CLS] state through
 * BERT's pooler (dense + tanh) and the classifier, one logit per pair.
 *
 * Inputs: input_ids, attention_mask, token_type_ids, int64 [batch, sequence]. Output:
 * logits [batch, num_labels], the names an Optimum export uses, so a directory holding its
 * own model.onnx runs through the same code.
 */
import { endianness } from 'node:os';
import {
  addAttention,
  addAttentionMask,
  addConstants,
  addFeedForward,
  type BertConfig,
  BertGraphBuilder,
  type Constants,
} from '../embeddings/minilm/graph.ts';
import { DataType, modelProto, valueInfoProto } from '../embeddings/minilm/onnx-proto.ts';
import type { Tensor } from '../embeddings/minilm/safetensors.ts';

export interface CrossEncoderConfig extends BertConfig {
  num_labels?: number;
  id2label?: Record<string, string>;
  architectures?: string[];
}

/** Labels the classifier has: `num_labels`, else the size of `id2label`, else 1 (a bare head). */
export function labelsOf(config: CrossEncoderConfig): number {
  return config.num_labels ?? (config.id2label ? Object.keys(config.id2label).length : 1);
}

/**
 * Sequence-classification checkpoints name the encoder `bert.…` beside `classifier.…`; the
 * layer builders expect the bare names an embedding checkpoint has, so the prefix goes.
 */
function bareNames(weights: Map<string, Tensor>): Map<string, Tensor> {
  const out = new Map<string, Tensor>();
  for (const [name, tensor] of weights) out.set(name.startsWith('bert.') ? name.slice(5) : name, tensor);
  return out;
}

/** Word + position + token type (the pair's segment ids, looked up per token), then LayerNorm. */
function addPairEmbeddings(g: BertGraphBuilder, { zero }: Constants): string {
  const wordTable = g.weight('embeddings.word_embeddings.weight');
  const positionTable = g.weight('embeddings.position_embeddings.weight');
  const typeTable = g.weight('embeddings.token_type_embeddings.weight');
  const words = g.op('Gather', [g.floats('word_embeddings', wordTable.shape, wordTable.data), 'input_ids']);
  const types = g.op('Gather', [
    g.floats('token_type_embeddings', typeTable.shape, typeTable.data),
    'token_type_ids',
  ]);
  const sequence = g.op('Shape', ['input_ids'], { start: 1, end: 2 });
  const positions = g.op('Slice', [
    g.floats('position_embeddings', positionTable.shape, positionTable.data),
    zero,
    sequence,
    zero,
  ]);
  return g.layerNorm(g.op('Add', [g.op('Add', [words, types]), positions]), 'embeddings.LayerNorm');
}

/** BERT's pooler reads the first token ([CLS]) only; the classifier maps it to the logits. */
function addHead(g: BertGraphBuilder, last: string): void {
  const first = g.op('Gather', [last, g.ints('cls_index', [0])], { axis: 1 });
  const cls = g.op('Squeeze', [first, g.ints('cls_axis', [1])]);
  const pooled = g.op('Tanh', [g.linear(cls, 'pooler.dense')]);
  if (g.weight('classifier.weight').shape[1] !== g.config.hidden_size)
    throw new Error('classifier.weight does not match hidden_size');
  g.named('Identity', [g.linear(pooled, 'classifier')], 'logits');
}

export function buildCrossEncoderGraph(weights: Map<string, Tensor>, config: CrossEncoderConfig): Uint8Array {
  if (endianness() !== 'LE') throw new Error('ONNX raw tensor data is little-endian; this machine is not');
  if (config.hidden_act !== 'gelu') throw new Error(`unsupported activation ${config.hidden_act}`);
  const labels = labelsOf(config);
  if (labels !== 1)
    throw new Error(`a reranker has one output label (a relevance logit); this model has ${labels}`);
  const g = new BertGraphBuilder(bareNames(weights), config);
  const constants = addConstants(g, { pooling: false });
  let state = addPairEmbeddings(g, constants);
  const mask = addAttentionMask(g, constants);
  for (let layer = 0; layer < config.num_hidden_layers; layer++) {
    const p = `encoder.layer.${layer}`;
    state = addFeedForward(g, constants, addAttention(g, constants, state, mask.bias, p), p);
  }
  addHead(g, state);
  const pair = ['batch', 'sequence'];
  return modelProto({
    name: 'bert_cross_encoder',
    doc: 'BERT cross-encoder (sequence classification, one label), built by mcp-event-gateway',
    producer: 'mcp-event-gateway',
    irVersion: 8,
    opset: 17,
    nodes: g.nodes,
    initializers: g.initializers,
    inputs: [
      valueInfoProto('input_ids', DataType.INT64, pair),
      valueInfoProto('attention_mask', DataType.INT64, pair),
      valueInfoProto('token_type_ids', DataType.INT64, pair),
    ],
    outputs: [valueInfoProto('logits', DataType.FLOAT, ['batch', 1])],
  });
}
