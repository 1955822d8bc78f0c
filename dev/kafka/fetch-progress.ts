/**
 * Progress of the first Kafka jar fetch, read from Maven's own transfer lines ("Downloaded
 * from central: URL (1.2 MB at 3.4 MB/s)"): Maven knows no total in advance, so it shows
 * files and bytes so far. On a terminal one line is redrawn in place; otherwise (a log, CI)
 * a plain line goes through the caller's log every PLAIN_EVERY_MS, as carriage returns
 * would pile up into one unreadable line there.
 */

const UNIT_BYTES: Record<string, number> = { B: 1, kB: 1e3, KB: 1e3, MB: 1e6, GB: 1e9 };

const PLAIN_EVERY_MS = 10_000;
const REDRAW_EVERY_MS = 100;

export interface Transfer {
  file: string;
  bytes: number;
}

/** One finished download in Maven's batch-mode output, or null for any other line. */
export function parseTransfer(line: string): Transfer | null {
  const match = /Downloaded from [^:]+: (\S+) \(([\d.]+) (B|kB|KB|MB|GB)\b/.exec(line);
  if (!match) return null;
  return { file: match[1]!.replace(/^.*\//, ''), bytes: Number(match[2]) * UNIT_BYTES[match[3]!]! };
}

export class FetchProgress {
  private readonly started = performance.now();
  private files = 0;
  private bytes = 0;
  private last = '';
  private partial = '';
  private lastShown = performance.now();
  private drawn = false;

  constructor(
    private readonly log: (line: string) => void,
    private readonly out: NodeJS.WriteStream = process.stdout,
  ) {}

  /** Feeds a chunk of Maven's output (lines may be split across chunks). */
  take(chunk: string): void {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      const transfer = parseTransfer(line);
      if (!transfer) continue;
      this.files += 1;
      this.bytes += transfer.bytes;
      this.last = transfer.file;
    }
    this.show();
  }

  /** Clears the terminal line, so the caller's closing log line starts clean. */
  finish(): void {
    if (this.drawn) this.out.write('\r\x1b[2K');
    this.drawn = false;
  }

  private show(): void {
    const now = performance.now();
    const seconds = Math.round((now - this.started) / 1000);
    const sofar = `${this.files} files, ${(this.bytes / 1e6).toFixed(1)} MB, ${seconds} s`;
    if (this.out.isTTY) {
      if (now - this.lastShown < REDRAW_EVERY_MS) return;
      this.lastShown = now;
      const line = `fetching Kafka jars: ${sofar}${this.last ? `, last ${this.last}` : ''}`;
      // Longer than the terminal, the line would wrap and the redraw would stack copies.
      const width = this.out.columns > 20 ? this.out.columns - 1 : 100;
      this.out.write(`\r\x1b[2K${line.slice(0, width)}`);
      this.drawn = true;
      return;
    }
    if (now - this.lastShown < PLAIN_EVERY_MS) return;
    this.lastShown = now;
    this.log(`still fetching: ${sofar} so far`);
  }
}
