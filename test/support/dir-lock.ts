/**
 * A lock across the test files of one run (and across runs on one checkout): mkdir is atomic,
 * so whoever creates the directory holds it. A lock whose holder died is taken over, so a
 * killed run never wedges the next one.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function withDirLock<T>(lockDir: string, fn: () => Promise<T>): Promise<T> {
  await mkdir(dirname(lockDir), { recursive: true });
  for (;;) {
    try {
      await mkdir(lockDir);
      await writeFile(join(lockDir, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(await readFile(join(lockDir, 'pid'), 'utf8').catch(() => '0'));
      if (holder > 0 && !pidAlive(holder)) await rm(lockDir, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}
