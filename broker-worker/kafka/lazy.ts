/**
 * A kafkajs client that connects on first use and again after it was dropped. Calls that
 * arrive while it connects share the one attempt, and a failed attempt is not cached, so
 * the next call tries again (the broker may be back).
 */
export class LazyConnection<T extends { connect(): Promise<void>; disconnect(): Promise<void> }> {
  private current: Promise<T> | null = null;

  constructor(private readonly create: () => T) {}

  get(): Promise<T> {
    if (!this.current) {
      const client = this.create();
      const attempt = client.connect().then(
        () => client,
        (error: unknown) => {
          if (this.current === attempt) this.current = null;
          void client.disconnect().catch(() => undefined);
          throw error;
        },
      );
      this.current = attempt;
    }
    return this.current;
  }

  /**
   * Forgets the client; the next get() makes a new one. The old one is disconnected once
   * `quiet` settles (by default at once), so calls still using it can finish.
   */
  drop(quiet: Promise<unknown> = Promise.resolve()): void {
    const previous = this.current;
    this.current = null;
    void previous
      ?.then(async (client) => {
        await quiet;
        await client.disconnect();
      })
      .catch(() => undefined);
  }

  async close(): Promise<void> {
    const previous = this.current;
    this.current = null;
    if (!previous) return;
    try {
      await (await previous).disconnect();
    } catch {
      // It never connected, or the broker is gone; nothing is left to flush.
    }
  }
}
