/**
 * Passwords reach `npm run users` on standard input or at a prompt that does not echo,
 * never as an argument: arguments land in shell history and in every `ps` listing.
 */
import { createInterface } from 'node:readline';
import { CliFailure } from '../cli/program.ts';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One trailing newline is the pipe's, not the password's.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

function prompt(question: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    const output = rl as unknown as { _writeToOutput(text: string): void };
    let asked = false;
    output._writeToOutput = (text: string) => {
      // Show the question, hide what is typed.
      if (!asked) process.stderr.write(text);
      asked = true;
    };
    rl.question(question, (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
  });
}

export async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) return readStdin();
  const first = await prompt('Password: ');
  const second = await prompt('Repeat password: ');
  if (first !== second) throw new CliFailure('the passwords differ; nothing was changed');
  return first;
}
