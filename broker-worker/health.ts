/** The last broker failure seen by any part of the worker, for `status`. */
export class BrokerHealth {
  private last: { message: string; at: string } | null = null;
  /** The periodic probe's latest verdict (null before the first probe or when unconfigured). */
  reachable: boolean | null = null;

  recordError(message: string): void {
    this.last = { message, at: new Date().toISOString() };
  }

  recordSuccess(): void {
    this.last = null;
  }

  get lastError(): { message: string; at: string } | null {
    return this.last;
  }
}
