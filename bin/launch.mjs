/**
 * What every production command runs first, in plain JavaScript so it works before anything
 * is compiled: it refuses a Node version outside package.json `engines` (a native addon would
 * otherwise fail later with a NODE_MODULE_VERSION error or an abort), and it names the build
 * command when `dist/` is missing instead of Node's "Cannot find module".
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');

/** `^20.18.0 || ^22.13.0 || ^24.0.0`: the only range form package.json uses. */
export function satisfiesEngines(version, range) {
  const [major, minor, patch] = version.replace(/^v/, '').split('.').map(Number);
  return range.split('||').some((part) => {
    const match = /^\s*\^(\d+)\.(\d+)\.(\d+)\s*$/.exec(part);
    if (!match) throw new Error(`package.json engines.node: unsupported range form "${part.trim()}"`);
    const [want, wantMinor, wantPatch] = match.slice(1).map(Number);
    if (major !== want) return false;
    return minor > wantMinor || (minor === wantMinor && patch >= wantPatch);
  });
}

export function supportedNodeMessage(version, range) {
  const supported = range.split('||').map((part) => part.trim());
  return `Node ${version} is not supported. Supported: ${supported.join(', ')} (package.json engines). Run with one of those.`;
}

/**
 * A long-running process takes no arguments (its settings are environment variables):
 * `--help` prints `usage` and exits 0, anything else prints it and exits 2, before
 * anything is loaded or started.
 */
export function checkServerArguments(args, usage) {
  if (args.length === 0) return;
  const help = args.length === 1 && (args[0] === '--help' || args[0] === '-h');
  if (!help) process.stderr.write(`error: unexpected argument ${JSON.stringify(args[0])}\n`);
  (help ? process.stdout : process.stderr).write(`${usage}\n`);
  process.exit(help ? 0 : 2);
}

/**
 * Checks the runtime and the build, then loads `dist/<entry>.js`. With `serverUsage` the
 * entry is a server: see checkServerArguments.
 */
export async function launch(entry, serverUsage) {
  if (serverUsage !== undefined) checkServerArguments(process.argv.slice(2), serverUsage);
  const range = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node;
  if (!satisfiesEngines(process.versions.node, range)) {
    process.stderr.write(`${supportedNodeMessage(process.version, range)}\n`);
    process.exit(1);
  }
  const compiled = join(root, 'dist', `${entry}.js`);
  if (!existsSync(compiled)) {
    process.stderr.write(`No build found (${compiled} is missing). Build it with:\n\n  npm run build\n\n`);
    process.exit(1);
  }
  await import(pathToFileURL(compiled).href);
}
