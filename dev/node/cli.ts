/**
 *   npm run node-runtimes -- fetch        fetch every pinned runtime (first run only)
 *   npm run node-runtimes -- path 24      print that runtime's node binary, fetching it first
 */
import { ensureNode, PINNED_RUNTIMES, type RuntimeMajor } from './runtimes.ts';

function isMajor(value: string | undefined): value is `${RuntimeMajor}` {
  return value !== undefined && value in PINNED_RUNTIMES;
}

async function main(args: string[]): Promise<number> {
  const [command, major] = args;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  if (command === 'fetch') {
    for (const each of Object.keys(PINNED_RUNTIMES) as `${RuntimeMajor}`[]) {
      log(`${await ensureNode(Number(each) as RuntimeMajor, log)}`);
    }
    return 0;
  }
  if (command === 'path' && isMajor(major)) {
    process.stdout.write(`${await ensureNode(Number(major) as RuntimeMajor, log)}\n`);
    return 0;
  }
  log(`usage: npm run node-runtimes -- fetch | path ${Object.keys(PINNED_RUNTIMES).join('|')}`);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
