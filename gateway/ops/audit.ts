/**
 * The audit trail (AUDIT_LOG): one JSON line per tool call and per refused request. Lines
 * hold who (key id, owning account), what (namespace, method, tool), how it ended and from
 * where; never a key, a password, a token or a tool's arguments. Writes are buffered and
 * asynchronous (pino's SonicBoom), so a slow disk never holds a request: past MAX_BUFFERED
 * bytes lines are dropped and counted instead of growing memory without end.
 */
import { pino } from 'pino';
import { type RequestRecord, STORE_UNAVAILABLE } from './observer.ts';

export type AuditTarget = { kind: 'stdout' } | { kind: 'file'; path: string };

export const AUDIT_LOG_FORM = 'stdout or file:/absolute/or/relative/path';

/** AUDIT_LOG's value, or an error naming the setting and the form it takes. */
export function parseAuditTarget(raw: string | undefined): AuditTarget | null {
  if (raw === undefined || raw === '') return null;
  if (raw === 'stdout') return { kind: 'stdout' };
  if (raw.startsWith('file:') && raw.length > 'file:'.length) return { kind: 'file', path: raw.slice(5) };
  throw new Error(`AUDIT_LOG: "${raw.slice(0, 80)}" is not an audit target; use ${AUDIT_LOG_FORM}`);
}

/** Which requests the trail records: every tool call, and anything refused. */
export function isAudited(record: RequestRecord): boolean {
  return (
    record.method === 'tools/call' ||
    (record.outcome !== 'ok' && record.outcome !== 'error') ||
    record.errorCode === STORE_UNAVAILABLE
  );
}

/** One line, built field by field, so nothing the record does not name can slip in. */
export function auditLine(record: RequestRecord): string {
  return `${JSON.stringify({
    time: new Date(record.at).toISOString(),
    event: record.method === 'tools/call' ? 'mcp_tool_call' : 'mcp_request_refused',
    keyId: record.keyId,
    owner: record.ownerId,
    namespace: record.namespace,
    method: record.method,
    tool: record.tool,
    outcome: record.outcome,
    errorCode: record.errorCode,
    durationMs: Math.round(record.seconds * 1000 * 100) / 100,
    traceId: record.traceId,
    clientAddress: record.clientAddress,
  })}\n`;
}

const MAX_BUFFERED = 16 * 1024 * 1024;

export class AuditLog {
  private readonly out: ReturnType<typeof pino.destination>;
  dropped = 0;

  constructor(private readonly target: AuditTarget) {
    this.out = pino.destination({
      dest: target.kind === 'stdout' ? 1 : target.path,
      sync: false,
      append: true,
      mkdir: true,
      minLength: 0,
      maxLength: MAX_BUFFERED,
    });
    this.out.on('drop', () => {
      this.dropped += 1;
    });
    // A write error (disk full, file removed with its directory) must not take the gateway down.
    this.out.on('error', () => {});
  }

  write(line: string): void {
    this.out.write(line);
  }

  /** After logrotate moved the file: open the path again, so new lines land in the new file. */
  reopen(): void {
    if (this.target.kind === 'file') this.out.reopen();
  }

  /** Waits until every buffered line is written (the gateway drains before it exits). */
  flush(): Promise<void> {
    // A failed flush has nothing more to wait for: the error handler above already heard it.
    return new Promise((resolve) => this.out.flush(() => resolve()));
  }

  async close(): Promise<void> {
    await this.flush();
    if (this.target.kind === 'file') this.out.end();
  }
}
