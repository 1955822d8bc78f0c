/**
 * Length-prefixed msgpack frames: a 4-byte big-endian body length, then the msgpack body.
 * Both ends of the gateway <-> broker-worker link use this and nothing else to cut the
 * byte stream, so a frame split over several reads or several frames in one read decode
 * the same way.
 */
import { Packr } from 'msgpackr';

/**
 * The largest body either side accepts. A consume result is held well below this by the
 * worker's result byte budget; anything larger is a bug or a hostile peer, and reading it
 * would let one peer make the other allocate without bound.
 */
export const IPC_MAX_FRAME_BYTES = 64 * 1024 * 1024;

const HEADER_BYTES = 4;

/**
 * Plain msgpack maps (no record extension, no structured clone): every frame decodes on
 * its own, and a peer cannot make us build class instances or shared-structure state.
 */
const packr = new Packr({ useRecords: false, mapsAsObjects: true, moreTypes: false, int64AsType: 'number' });

/** The byte stream cannot be decoded any further; the link must be closed. */
export class FrameError extends Error {
  override readonly name = 'FrameError';
}

export function encodeFrame(value: unknown, maxBytes = IPC_MAX_FRAME_BYTES): Buffer {
  const body = packr.pack(value);
  if (body.length > maxBytes) {
    throw new FrameError(`frame of ${body.length} bytes exceeds the ${maxBytes}-byte limit of the IPC link`);
  }
  const frame = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, HEADER_BYTES);
  return frame;
}

/**
 * Accumulates chunks and yields whole decoded frames. After it throws, the stream is out
 * of sync for good; the owner closes the connection.
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly maxBytes = IPC_MAX_FRAME_BYTES) {}

  push(chunk: Buffer): unknown[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const frames: unknown[] = [];
    while (this.buffered >= HEADER_BYTES) {
      const head = this.peek(HEADER_BYTES);
      const length = head.readUInt32BE(0);
      if (length > this.maxBytes) {
        throw new FrameError(
          `peer announced a frame of ${length} bytes, over the ${this.maxBytes}-byte limit of the IPC link`,
        );
      }
      if (this.buffered < HEADER_BYTES + length) break;
      const frame = this.take(HEADER_BYTES + length);
      frames.push(decodeBody(frame.subarray(HEADER_BYTES)));
    }
    return frames;
  }

  /** Bytes received but not yet part of a whole frame. */
  get pendingBytes(): number {
    return this.buffered;
  }

  private peek(n: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length >= n) return first.subarray(0, n);
    this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0]!.subarray(0, n);
  }

  private take(n: number): Buffer {
    let first = this.chunks[0]!;
    if (first.length < n) {
      first = Buffer.concat(this.chunks);
      this.chunks = [first];
    }
    const out = first.subarray(0, n);
    if (first.length === n) this.chunks.shift();
    else this.chunks[0] = first.subarray(n);
    this.buffered -= n;
    return out;
  }
}

function decodeBody(body: Buffer): unknown {
  if (body.length === 0) throw new FrameError('peer sent an empty frame');
  try {
    return packr.unpack(body);
  } catch (error) {
    throw new FrameError(`peer sent a frame that is not valid msgpack: ${(error as Error).message}`);
  }
}
