/**
 * Runs the real gateway process (compiled `gateway/main.ts`) for a test, so a restart is a new
 * process with nothing carried over but its settings and data directory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { compiledEntry } from './compiled.ts';
import { waitFor } from './harness.ts';

const root = join(import.meta.dirname, '..', '..');

export interface GatewayProcess {
  url: string;
  child: ChildProcess;
  lines: string[];
  stop(): Promise<number | null>;
}

function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || /^(BROKER_|EVENT_)/.test(name) || name === 'DATA_DIR') continue;
    env[name] = value;
  }
  return env;
}

function spawnGateway(env: Record<string, string>): {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, [compiledEntry('gateway/main.ts')], {
    cwd: root,
    env: { ...cleanEnv(), HOST: '127.0.0.1', PORT: '0', HTTP_ENGINE: 'node', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      rest += chunk;
      const parts = rest.split('\n');
      rest = parts.pop() ?? '';
      lines.push(...parts);
    });
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, lines, exited };
}

/** Starts a gateway and resolves once it listens; `env` needs DATA_DIR and BROKER_WORKERS. */
export async function startGatewayProcess(env: Record<string, string>): Promise<GatewayProcess> {
  const { child, lines, exited } = spawnGateway(env);
  let stopped = false;
  void exited.then(() => {
    stopped = true;
  });
  let port: number;
  try {
    port = await waitFor(
      () => {
        if (stopped) throw new Error('the gateway process exited');
        const line = lines.find((l) => l.includes('gateway listening on http://'));
        return Number(line?.match(/gateway listening on http:\/\/127\.0\.0\.1:(\d+)/)?.[1] ?? 0);
      },
      { what: 'the gateway process to log "gateway listening on"', timeoutMs: 30_000, intervalMs: 50 },
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`gateway did not start (${(error as Error).message}):\n${lines.join('\n')}`);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    lines,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Runs a gateway expected to refuse its settings: exit code and everything it printed. */
export async function runGatewayToExit(
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const { child, lines, exited } = spawnGateway(env);
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await exited;
  clearTimeout(timer);
  return { code, output: lines.join('\n') };
}
