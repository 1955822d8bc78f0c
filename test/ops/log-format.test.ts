/**
 * Log lines are pino-pretty's on a terminal and JSON anywhere else. The terminal is a real
 * pseudo-terminal made by util-linux `script`, so the TTY check itself is what is tested.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { stripVTControlCharacters } from 'node:util';

const root = join(import.meta.dirname, '../..');
const program = `import('./gateway/logger.ts').then((m) => m.createLogger('info').info({ port: 8080 }, 'hello operator'))`;

function run(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd: root }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
}

test('JSON lines when stdout is not a terminal', async () => {
  const output = await run(process.execPath, ['--import', 'tsx', '-e', program]);
  const line = JSON.parse(output.trim()) as Record<string, unknown>;
  assert.equal(line.msg, 'hello operator');
  assert.equal(line.port, 8080);
});

test('pino-pretty lines when stdout is a terminal', async () => {
  const command = `${JSON.stringify(process.execPath)} --import tsx -e ${JSON.stringify(program)}`;
  const output = stripVTControlCharacters(await run('script', ['-qec', command, '/dev/null']));
  assert.match(output, /INFO/);
  assert.match(output, /hello operator/);
  assert.match(output, /port: 8080/);
  assert.doesNotMatch(output, /"msg":/);
});
