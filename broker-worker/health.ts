/**
 * The broker's state as the periodic probe sees it, for `status` and for deadline errors.
 * Only the probe writes an error here: a call's failure names that caller's topic and
 * group, and every key can read `status` (through event_capabilities) or hit a deadline.
 */
export class BrokerHealth {
  private last: { message: string; at: string } | null = null;
  /** The periodic probe's latest verdict (null before the first probe or when unconfigured). */
  reachable: boolean | null = null;

  recordProbeFailure(message: string): void {
    this.last = { message, at: new Date().toISOString() };
  }

  recordSuccess(): void {
    this.last = null;
  }

  get lastError(): { message: string; at: string } | null {
    return this.last;
  }
}
