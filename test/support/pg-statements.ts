/**
 * The statements this process sends to one test database, one entry per round trip, as pg's
 * Client sends them (a pool's queries go through it too), with the connection's backend
 * pid. The statements themselves go to the real server unchanged. A probe runs a statement
 * of the test's on the same connection just before each statement it matches, inside
 * whatever transaction that one is in: what the server's settings were for it.
 */
import pg from 'pg';

export interface SentStatement {
  text: string;
  pid: number;
}

export interface Probe {
  before(text: string): boolean;
  sql: string;
}

export interface StatementCapture {
  sent: SentStatement[];
  /** The probe's first row, once per statement it matched, in order. */
  probed: Record<string, unknown>[];
  stop(): void;
}

type Query = (this: pg.Client, ...args: unknown[]) => unknown;

/** Captures until stop(); one capture at a time. */
export function captureStatements(database: string, probe?: Probe): StatementCapture {
  const proto = pg.Client.prototype as unknown as { query: Query };
  const original = proto.query;
  const sent: SentStatement[] = [];
  const probed: Record<string, unknown>[] = [];
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === 'string' ? first : first?.text;
    if (this.database !== database || text === undefined) return original.apply(this, args);
    sent.push({ text, pid: (this as unknown as { processID: number }).processID });
    if (!probe?.before(text)) return original.apply(this, args);
    // Sent and answered before the caller's statement: the client never holds two at once.
    const asked = (original.call(this, probe.sql) as Promise<pg.QueryResult>).then((result) => {
      probed.push(result.rows[0] as Record<string, unknown>);
    });
    const callback = args.at(-1);
    if (typeof callback !== 'function') return asked.then(() => original.apply(this, args));
    asked.then(
      () => original.apply(this, args),
      (error: unknown) => (callback as (error: unknown) => void)(error),
    );
    return undefined;
  };
  return {
    sent,
    probed,
    stop() {
      proto.query = original;
    },
  };
}
