import { spawn } from 'node:child_process';

export interface ExecResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  timedOut: boolean;
}

export interface ExecOptions {
  cwd?: string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Hears the output as it comes (progress), besides its being kept. */
  onOutput?: (chunk: string) => void;
}

/**
 * Runs a short-lived tool (java -version, keytool, mvn, StorageTool) and keeps its combined output
 * so a failure can be explained. A timeout kills the tool instead of letting a stalled network or
 * a prompt hang the caller forever. ENOENT is reported as `missing` rather than thrown.
 */
export function execTool(
  command: string,
  args: string[],
  options: ExecOptions = {},
): Promise<ExecResult | { missing: true }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    const take = (chunk: Buffer) => {
      chunks.push(chunk);
      options.onOutput?.(chunk.toString('utf8'));
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    let timedOut = false;
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            child.kill('SIGKILL');
          }, options.timeoutMs);
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (error.code === 'ENOENT') resolve({ missing: true });
      else reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output: Buffer.concat(chunks).toString('utf8'), timedOut });
    });
  });
}
