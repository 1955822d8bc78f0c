/**
 * Debian's HAProxy in front of test gateways, running deploy/haproxy/haproxy.cfg as shipped:
 * only the listen address, the servers' addresses and ops ports, the admin socket's path and
 * the 503 error file's path (to deploy/haproxy/errors/503.http in this checkout) are replaced, so a test of the fleet tests the configuration docs/deployment.md shows.
 * The binary is unpacked from Debian's package into .cache/ (test/support/debian-tool.ts),
 * since installing the package would start a system HAProxy this suite never asked for.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { debianTool, type Found } from './debian-tool.ts';
import { waitFor } from './harness.ts';

const root = join(import.meta.dirname, '..', '..');
export const HAPROXY_CONFIG = join(root, 'deploy', 'haproxy', 'haproxy.cfg');
/** What HAProxy answers when no gateway is UP; installed as /etc/haproxy/errors/mcp-503.http. */
export const HAPROXY_503 = join(root, 'deploy', 'haproxy', 'errors', '503.http');

/** HAProxy's binary, or why it cannot be had here (the caller skips with that reason). */
export function findHaproxy(): Promise<Found> {
  return debianTool({
    package: 'haproxy',
    binary: 'haproxy',
    how: 'extract',
    dir: 'usr/sbin',
    libraries: ['liblua5.3-0', 'libopentracing-c-wrapper0', 'libopentracing1'],
  });
}

export interface Backend {
  /** `127.0.0.1:port` of the MCP listener. */
  address: string;
  /** Port of its ops listener (METRICS_PORT), where /readyz is. */
  opsPort: number;
}

/** The shipped file with this run's addresses; throws if a line it replaces has moved. */
export function renderConfig(template: string, bind: number, backends: Backend[], socket: string): string {
  const replace = (text: string, pattern: RegExp, by: string) => {
    if (!pattern.test(text)) throw new Error(`${HAPROXY_CONFIG} has no line matching ${pattern}`);
    return text.replace(pattern, by);
  };
  let config = replace(template, /stats socket \S+/, `stats socket ${socket}`);
  // TLS is the proxy's job in production; the test's clients speak plain HTTP on loopback.
  config = replace(config, /bind :443 ssl crt \S+/, `bind 127.0.0.1:${bind}`);
  config = replace(config, /errorfile 503 \S+/, `errorfile 503 "${HAPROXY_503}"`);
  const fallback = '/run/haproxy/no-gateway.sock';
  if (config.split(fallback).length !== 3)
    throw new Error(`${HAPROXY_CONFIG} should name ${fallback} twice (its backup server and its frontend)`);
  config = config.replaceAll(fallback, join(dirname(socket), 'no-gateway.sock'));
  const servers = [...config.matchAll(/^ {4}server (\S+) \S+ check port \d+$/gm)];
  if (servers.length !== backends.length)
    throw new Error(`${HAPROXY_CONFIG} lists ${servers.length} servers, the test has ${backends.length}`);
  servers.forEach((server, index) => {
    const { address, opsPort } = backends[index]!;
    config = config.replace(server[0], `    server ${server[1]} ${address} check port ${opsPort}`);
  });
  return config;
}

export interface ServerStat {
  /** UP, DOWN, "UP 1/2" while rising, MAINT… */
  status: string;
  /** Answers with a 2xx status this server gave through HAProxy since it started. */
  answered2xx: number;
  /** Answers with a 4xx status (429 included) this server gave through HAProxy. */
  answered4xx: number;
}

export interface Haproxy {
  url: string;
  names: string[];
  /** Per server, from the admin socket's `show stat`. */
  stats(): Promise<Record<string, ServerStat>>;
  stop(): Promise<void>;
}

function adminCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const client = connect(socket, () => client.end(`${command}\n`));
    client.setEncoding('utf8');
    client.on('data', (chunk: string) => {
      answer += chunk;
    });
    client.on('end', () => resolve(answer));
    client.on('error', reject);
  });
}

export async function startHaproxy(
  found: { path: string; env: Record<string, string> },
  options: { dir: string; port: number; backends: Backend[] },
): Promise<Haproxy> {
  const socket = join(options.dir, 'haproxy.sock');
  const config = renderConfig(await readFile(HAPROXY_CONFIG, 'utf8'), options.port, options.backends, socket);
  const file = join(options.dir, 'haproxy.cfg');
  await writeFile(file, config);
  // -c first: a configuration HAProxy refuses fails here with its own words.
  const check = spawn(found.path, ['-c', '-f', file], { env: { ...process.env, ...found.env } });
  const checkOutput: string[] = [];
  check.stdout.on('data', (chunk) => checkOutput.push(String(chunk)));
  check.stderr.on('data', (chunk) => checkOutput.push(String(chunk)));
  const checked = await new Promise<number | null>((resolve) => check.once('exit', resolve));
  if (checked !== 0) throw new Error(`haproxy -c refused ${file}:\n${checkOutput.join('')}`);

  // -db: in the foreground, so this process owns it and kill stops it.
  const child: ChildProcess = spawn(found.path, ['-db', '-f', file], {
    env: { ...process.env, ...found.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout!.on('data', (chunk) => output.push(String(chunk)));
  child.stderr!.on('data', (chunk) => output.push(String(chunk)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The gateways: the fallback server (no health check) is HAProxy's own JSON 503.
  const names = [...config.matchAll(/^ {4}server (\S+) \S+ check port /gm)].map((match) => match[1]!);

  const stats = async (): Promise<Record<string, ServerStat>> => {
    const csv = (await adminCommand(socket, 'show stat')).replace(/^# /, '').trim().split('\n');
    const header = csv[0]!.split(',');
    const column = (name: string) => header.indexOf(name);
    const result: Record<string, ServerStat> = {};
    for (const line of csv.slice(1)) {
      const cells = line.split(',');
      if (cells[column('pxname')] !== 'gateways' || !names.includes(cells[column('svname')]!)) continue;
      result[cells[column('svname')]!] = {
        status: cells[column('status')]!,
        answered2xx: Number(cells[column('hrsp_2xx')]),
        answered4xx: Number(cells[column('hrsp_4xx')]),
      };
    }
    return result;
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`haproxy exited: ${output.join('')}`);
        return await stats().catch(() => undefined);
      },
      { what: () => `HAProxy's admin socket to answer; output: ${output.join('')}`, timeoutMs: 10_000 },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `http://127.0.0.1:${options.port}`, names, stats, stop };
}
