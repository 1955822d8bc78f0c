/**
 * One connected IPC link: cuts the socket's bytes into validated frames and writes frames
 * back. A broken frame or a frame of the wrong shape closes the link, because after that
 * nothing later on the stream can be trusted to line up.
 */
import type { Socket } from 'node:net';
import { encodeFrame, FrameDecoder, FrameError, IPC_MAX_FRAME_BYTES } from './frame-codec.ts';
import { parseFrame } from './frame-schema.ts';
import type { IpcFrame } from './messages.ts';

export interface FramedLinkHandlers {
  onFrame(frame: IpcFrame): void;
  /** Called once. `error` is set when the link was closed because of a fault, not by `close()`. */
  onClose(error: Error | null): void;
}

/** The peer broke the protocol (bad bytes, bad frame shape, unknown id, wrong order). */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
}

export class FramedLink {
  private readonly decoder: FrameDecoder;
  private closedWith: { error: Error | null } | null = null;
  /** performance.now() of the last byte received: any traffic proves the peer is running. */
  lastReceivedAt = performance.now();

  constructor(
    private readonly socket: Socket,
    private readonly handlers: FramedLinkHandlers,
    private readonly maxFrameBytes = IPC_MAX_FRAME_BYTES,
  ) {
    this.decoder = new FrameDecoder(maxFrameBytes);
    socket.setNoDelay?.(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (error) => this.finish(error));
    socket.on('close', () => this.finish(null));
  }

  get closed(): boolean {
    return this.closedWith !== null;
  }

  /**
   * Writes one frame. Returns false when the link is already closed. Throws FrameError
   * when the frame is over the size limit (the link stays usable: nothing was written).
   */
  send(frame: IpcFrame): boolean {
    if (this.closedWith) return false;
    const bytes = encodeFrame(frame, this.maxFrameBytes);
    this.socket.write(bytes);
    return true;
  }

  /** Closes the link; with an error, the handlers see it as the reason. */
  close(error: Error | null = null): void {
    if (this.closedWith) return;
    this.finish(error);
    this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    if (this.closedWith) return;
    this.lastReceivedAt = performance.now();
    let values: unknown[];
    try {
      values = this.decoder.push(chunk);
    } catch (error) {
      this.close(error instanceof FrameError ? new ProtocolError(error.message) : (error as Error));
      return;
    }
    for (const value of values) {
      if (this.closedWith) return;
      const parsed = parseFrame(value);
      if (!parsed.ok) {
        this.close(new ProtocolError(parsed.problem));
        return;
      }
      this.handlers.onFrame(parsed.frame);
    }
  }

  private finish(error: Error | null): void {
    if (this.closedWith) return;
    this.closedWith = { error };
    this.handlers.onClose(error);
  }
}
