/**
 * A progress line for the memory commands (downloads, re-embedding, import). On a terminal it
 * redraws one line in place; in a log or CI (no TTY) carriage returns would pile up into
 * one unreadable line, so it prints a plain line every tenth of the way instead. It writes
 * to stderr so a command's stdout stays its result.
 */
export class Progress {
  private readonly started = performance.now();
  private lastDraw = 0;
  private lastTenth = -1;
  private done = 0;
  /** Counts shown after the rate (the import's created, updated, unchanged, bad). */
  detail: (() => string) | null = null;

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly unit: 'bytes' | 'items' = 'items',
    private readonly out: NodeJS.WriteStream = process.stderr,
  ) {}

  /** Counts up by `count`; draws at most ten times a second on a terminal. */
  add(count: number): void {
    this.update(this.done + count);
  }

  update(done: number): void {
    this.done = done;
    if (this.out.isTTY) {
      const now = performance.now();
      if (now - this.lastDraw < 100 && done < this.total) return;
      this.lastDraw = now;
      this.out.write(`\r\x1b[2K${this.line()}`);
      return;
    }
    const tenth = this.total > 0 ? Math.floor((done / this.total) * 10) : 10;
    if (tenth > this.lastTenth) {
      this.lastTenth = tenth;
      this.out.write(`${this.line()}\n`);
    }
  }

  /**
   * A message of its own line (a bad import line). On a terminal it goes above the bar, which
   * is drawn again under it; written over the bar, the two would garble each other.
   */
  note(message: string): void {
    if (!this.out.isTTY) {
      this.out.write(`${message}\n`);
      return;
    }
    this.out.write(`\r\x1b[2K${message}\n${this.line()}`);
    this.lastDraw = performance.now();
  }

  /** Ends the line; later output starts on a fresh one. */
  finish(): void {
    if (this.out.isTTY) this.out.write(`\r\x1b[2K${this.line()}\n`);
    else if (this.lastTenth < 10) this.out.write(`${this.line()}\n`);
  }

  private line(): string {
    const seconds = Math.max((performance.now() - this.started) / 1000, 1e-3);
    const share = this.total > 0 ? Math.min(this.done / this.total, 1) : 1;
    const width = 24;
    const filled = Math.round(share * width);
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
    const percent = `${Math.floor(share * 100)}%`.padStart(4);
    if (this.unit === 'bytes') {
      const mb = (n: number) => (n / 1e6).toFixed(1);
      return `${this.label} ${bar} ${percent} ${mb(this.done)}/${mb(this.total)} MB, ${mb(this.done / seconds)} MB/s`;
    }
    const rate = this.done / seconds;
    const detail = this.detail ? ` (${this.detail()})` : '';
    return `${this.label} ${bar} ${percent} ${this.done}/${this.total}, ${rate.toFixed(rate < 10 ? 1 : 0)}/s${detail}`;
  }
}
