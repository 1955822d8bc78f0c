/**
 * Reads float32 tensors from a .safetensors file: an 8-byte little-endian header length,
 * a JSON header naming each tensor's dtype, shape and byte range, then the raw data.
 */
export interface Tensor {
  shape: number[];
  data: Float32Array;
}

export function readSafetensors(file: Buffer): Map<string, Tensor> {
  const headerLength = Number(file.readBigUInt64LE(0));
  if (headerLength > file.length - 8) throw new Error('not a safetensors file (header past the end)');
  const header = JSON.parse(file.toString('utf8', 8, 8 + headerLength)) as Record<
    string,
    { dtype: string; shape: number[]; data_offsets: [number, number] }
  >;
  const base = 8 + headerLength;
  const tensors = new Map<string, Tensor>();
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__' || info.dtype !== 'F32') continue;
    const [from, to] = info.data_offsets;
    const count = info.shape.reduce((a, b) => a * b, 1);
    if (to - from !== count * 4 || base + to > file.length)
      throw new Error(`tensor ${name} has a bad byte range`);
    // A copy: the header length is rarely a multiple of 4, and Float32Array needs alignment.
    const data = new Float32Array(count);
    Buffer.from(data.buffer).set(file.subarray(base + from, base + to));
    tensors.set(name, { shape: info.shape, data });
  }
  return tensors;
}
