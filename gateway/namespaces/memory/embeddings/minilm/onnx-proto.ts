/**
 * The few ONNX protobuf messages a graph of standard operators needs, written directly.
 * Field numbers come from onnx/onnx.proto and never change (protobuf compatibility), so
 * this is cheaper to keep than a protobuf runtime plus generated ONNX bindings for about
 * a dozen fields. Only writing is needed: the graph is built once and onnxruntime reads it.
 */

type Bytes = Uint8Array;

function varint(value: number | bigint): Bytes {
  // Negative int64 values (axis = -1) take ten bytes of two's complement, as protobuf says.
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Uint8Array.from(out);
}

const concat = (parts: Bytes[]): Bytes => Buffer.concat(parts);
const tag = (field: number, wireType: number) => varint((field << 3) | wireType);
const int = (field: number, value: number | bigint): Bytes => concat([tag(field, 0), varint(value)]);
const bytes = (field: number, data: Bytes | string): Bytes => {
  const payload = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  return concat([tag(field, 2), varint(payload.length), payload]);
};
const message = (field: number, parts: Bytes[]): Bytes => bytes(field, concat(parts));
const float = (field: number, value: number): Bytes => {
  const payload = Buffer.alloc(4);
  payload.writeFloatLE(value);
  return concat([tag(field, 5), payload]);
};

export const DataType = { FLOAT: 1, INT64: 7 } as const;

export type Attribute = number | number[] | { float: number };

/** TensorProto: dims 1, data_type 2, name 8, raw_data 9 (little-endian, as x86 and arm hold it). */
export function tensorProto(name: string, dataType: number, dims: number[], raw: Bytes): Bytes {
  return concat([...dims.map((d) => int(1, d)), int(2, dataType), bytes(8, name), bytes(9, raw)]);
}

/** AttributeProto: name 1, f 2, i 3, ints 8, type 20 (FLOAT 1, INT 2, INTS 7). */
function attributeProto(name: string, value: Attribute): Bytes {
  if (Array.isArray(value)) return concat([bytes(1, name), ...value.map((v) => int(8, v)), int(20, 7)]);
  if (typeof value === 'object') return concat([bytes(1, name), float(2, value.float), int(20, 1)]);
  return concat([bytes(1, name), int(3, value), int(20, 2)]);
}

/** NodeProto: input 1, output 2, name 3, op_type 4, attribute 5. */
export function nodeProto(
  opType: string,
  inputs: string[],
  outputs: string[],
  name: string,
  attributes: Record<string, Attribute> = {},
): Bytes {
  return concat([
    ...inputs.map((i) => bytes(1, i)),
    ...outputs.map((o) => bytes(2, o)),
    bytes(3, name),
    bytes(4, opType),
    ...Object.entries(attributes).map(([key, value]) => message(5, [attributeProto(key, value)])),
  ]);
}

/**
 * ValueInfoProto (name 1, type 2) → TypeProto.tensor_type 1 → elem_type 1, shape 2 →
 * TensorShapeProto.dim 1 → dim_value 1 or dim_param 2 (a named, dynamic axis).
 */
export function valueInfoProto(name: string, dataType: number, dims: (number | string)[]): Bytes {
  const dim = (d: number | string) => message(1, [typeof d === 'number' ? int(1, d) : bytes(2, d)]);
  const shape = message(2, dims.map(dim));
  return concat([bytes(1, name), message(2, [message(1, [int(1, dataType), shape])])]);
}

/**
 * ModelProto: ir_version 1, producer_name 2, graph 7, opset_import 8 (domain 1, version 2).
 * GraphProto: node 1, name 2, initializer 5, doc_string 10, input 11, output 12.
 */
export function modelProto(graph: {
  name: string;
  doc: string;
  nodes: Bytes[];
  initializers: Bytes[];
  inputs: Bytes[];
  outputs: Bytes[];
  irVersion: number;
  opset: number;
  producer: string;
}): Bytes {
  const graphProto = concat([
    ...graph.nodes.map((n) => message(1, [n])),
    bytes(2, graph.name),
    ...graph.initializers.map((t) => message(5, [t])),
    bytes(10, graph.doc),
    ...graph.inputs.map((v) => message(11, [v])),
    ...graph.outputs.map((v) => message(12, [v])),
  ]);
  return concat([
    int(1, graph.irVersion),
    bytes(2, graph.producer),
    message(7, [graphProto]),
    message(8, [bytes(1, ''), int(2, graph.opset)]),
  ]);
}
