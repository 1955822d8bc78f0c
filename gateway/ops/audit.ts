/**
 * The audit trail (AUDIT_LOG): one JSON line per tool call and per refused request. Lines
 * hold who (key id, owning account), what (namespace, method, tool), how it ended and from
 * where; never a key, a password, a token or a tool's arguments. Writes are buffered and
 * asynchronous (pino's SonicBoom), so a slow disk never holds a request: past MAX_BUFFERED
 * bytes lines are dropped and counted instead of growing memory without end.
 */
import { closeSync, constants, existsSync, fstatSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
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

function isNamedPipe(path: string): boolean {
  try {
    return statSync(path).isFIFO();
  } catch {
    return false;
  }
}

/**
 * Makes the file's missing directories, one level at a time, or says why one cannot be made.
 * Node's recursive mkdir goes back to a level's parent and tries again whenever the level
 * answers ENOENT, which a directory under /proc always does although its parent exists: a
 * start with such a path spun there for good (record 0173).
 */
function directoryProblem(path: string): string | null {
  const missing: string[] = [];
  for (let dir = dirname(path); !existsSync(dir) && dirname(dir) !== dir; dir = dirname(dir))
    missing.unshift(dir);
  for (const dir of missing) {
    try {
      mkdirSync(dir);
    } catch (error) {
      // Made meanwhile by someone else: as good.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      return `AUDIT_LOG: cannot make the directory ${dir} for ${path} (${(error as Error).message}); use file: with a path in a directory that exists or that the gateway may make (none can be made under /proc or /sys), or AUDIT_LOG=stdout`;
    }
  }
  return null;
}

/**
 * Why `path` cannot take the trail, or null. It is opened once here, on this thread and
 * without blocking, because SonicBoom opens it on a libuv thread: a path it could not open
 * was only an 'error' event (every line lost, the gateway up), and a named pipe held that
 * thread in open() until a reader came, or in write() while the reader did not read, which
 * then held node's own exit for good (record 0173).
 */
export function auditFileProblem(path: string): string | null {
  const pipe = `AUDIT_LOG: ${path} is a named pipe, which holds the gateway whenever its reader is away or stalls; use file: with a regular file (a log shipper can tail it) or AUDIT_LOG=stdout`;
  const directory = directoryProblem(path);
  if (directory !== null) return directory;
  let fd: number;
  try {
    // O_NONBLOCK: a named pipe with no reader fails at once (ENXIO) instead of waiting for one.
    const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK;
    fd = openSync(path, flags, 0o666);
  } catch (error) {
    if (isNamedPipe(path)) return pipe;
    return `AUDIT_LOG: cannot open ${path} for writing (${(error as Error).message}); use a path the gateway may write`;
  }
  try {
    return fstatSync(fd).isFIFO() ? pipe : null;
  } finally {
    closeSync(fd);
  }
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

  /**
   * After logrotate moved the file: open the path again, so new lines land in the new file.
   * A path that can no longer take the trail (see auditFileProblem) is not opened: lines go on
   * to the file already open, and the reason is returned.
   */
  reopen(): string | null {
    if (this.target.kind !== 'file') return null;
    const problem = auditFileProblem(this.target.path);
    if (problem === null) this.out.reopen();
    return problem;
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
