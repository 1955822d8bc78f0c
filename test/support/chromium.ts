/**
 * A headless Chromium for browser tests, from the operating system: browsers cannot be
 * downloaded here, so Debian's `chromium` package is installed with apt-get when it is
 * missing and this process runs as root (a CI container). Otherwise the error says what to
 * install, or CHROMIUM_PATH names a browser to use.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
const LONG = { timeout: 15 * 60_000, maxBuffer: 16 * 1024 * 1024 };

function found(): string | undefined {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  return CANDIDATES.find((path) => existsSync(path));
}

async function install(): Promise<void> {
  if (process.getuid?.() !== 0) {
    throw new Error(
      'no Chromium found; install it (Debian/Ubuntu: sudo apt-get install chromium) or set CHROMIUM_PATH, and rerun',
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Another test file may be running apt-get at the same moment: wait for its lock.
  const wait = ['-o', 'DPkg::Lock::Timeout=600'];
  await run('apt-get', [...wait, 'update'], { ...LONG, env });
  await run('apt-get', [...wait, 'install', '-y', '--no-install-recommends', 'chromium'], { ...LONG, env });
}

let ready: Promise<string> | undefined;

/** The path of a Chromium executable, installing Debian's package first when needed and allowed. */
export function chromiumPath(): Promise<string> {
  ready ??= (async () => {
    let path = found();
    if (!path) {
      await install();
      path = found();
    }
    if (!path)
      throw new Error('apt-get installed chromium, but no executable was found at /usr/bin/chromium');
    return path;
  })();
  return ready;
}
