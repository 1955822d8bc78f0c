/**
 * The order in which one PGlite engine runs the wire messages of several connections.
 *
 * pglite-socket's own queue runs messages one by one in arrival order and keeps a connection
 * to itself only inside an explicit transaction. An extended query (Parse, Bind, Execute,
 * Sync) is several messages, so two connections querying at once interleaved them: one's
 * Bind met the other's unnamed statement ("bind message supplies 2 parameters, but prepared
 * statement "" requires 6"), failing a call at random under load. Here a connection that
 * starts a message group keeps the engine until the group ends (Sync, a simple Query, a
 * Terminate, or a start-up or password message), and for as long as a transaction it opened
 * stays open.
 */
import type { PGlite } from '@electric-sql/pglite';

interface Waiting {
  handlerId: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (error: Error) => void;
}

/** First bytes of messages after which a connection no longer needs the engine to itself. */
const GROUP_ENDS = new Set(['S', 'Q', 'X', 'p'].map((c) => c.charCodeAt(0)));

function endsGroup(message: Uint8Array): boolean {
  // A start-up message has no type byte: it begins with its length, whose first byte is 0.
  return message[0] === 0 || GROUP_ENDS.has(message[0]!);
}

/** Same surface as pglite-socket's QueryQueueManager, which its handlers call. */
export class MessageGroupQueue {
  private readonly waiting: Waiting[] = [];
  private owner: number | null = null;
  private running = false;

  constructor(private readonly db: PGlite) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ handlerId, message, onData, resolve, reject });
      void this.run();
    });
  }

  getQueueLength(): number {
    return this.waiting.length;
  }

  /** A connection went away: its waiting messages fail and it no longer holds the engine. */
  clearQueueForHandler(handlerId: number): void {
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      if (this.waiting[i]!.handlerId !== handlerId) continue;
      this.waiting.splice(i, 1)[0]!.reject(new Error('Handler disconnected'));
    }
  }

  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.owner !== handlerId) return;
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    this.owner = null;
    void this.run();
  }

  private next(): Waiting | undefined {
    const index = this.owner === null ? 0 : this.waiting.findIndex((w) => w.handlerId === this.owner);
    return index === -1 ? undefined : this.waiting.splice(index, 1)[0];
  }

  private async run(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let item = this.next(); item; item = this.next()) {
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item!.message, {
              onRawData: (data) => {
                bytes += data.length;
                item!.onData(data);
              },
            }),
          );
        } catch (error) {
          item.reject(error as Error);
          this.owner = null;
          continue;
        }
        this.owner = endsGroup(item.message) && !this.db.isInTransaction() ? null : item.handlerId;
        item.resolve(bytes);
      }
    } finally {
      this.running = false;
    }
  }
}
