/**
 * Which files of a Hugging Face model directory the onnx reranker reads. Light on purpose
 * (no onnxruntime): the settings check runs it on the main thread at start.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface CrossEncoderFiles {
  tokenizer: string;
  config: string | null;
  /** An exported graph (model.onnx, or onnx/model.onnx as the Hub's Optimum exports lay it out). */
  onnx: string | null;
  /** Weights to build the graph from when there is no model.onnx (needs config.json). */
  safetensors: string | null;
}

/** The files, or what is missing, naming the directory. */
export function crossEncoderFiles(dir: string): CrossEncoderFiles | string {
  if (!existsSync(dir)) return `${dir} does not exist`;
  const tokenizer = join(dir, 'tokenizer.json');
  if (!existsSync(tokenizer)) return `${dir} has no tokenizer.json`;
  const found = (name: string) => (existsSync(join(dir, name)) ? join(dir, name) : null);
  const files = {
    tokenizer,
    config: found('config.json'),
    onnx: found('model.onnx') ?? found('onnx/model.onnx'),
    safetensors: found('model.safetensors'),
  };
  if (!files.onnx && !(files.safetensors && files.config))
    return `${dir} has neither model.onnx nor model.safetensors with config.json`;
  return files;
}
