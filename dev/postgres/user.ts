/**
 * Postgres refuses to run as root. Run as root (CI, containers), the server and initdb run as
 * an unprivileged user instead: the one named (LOCAL_POSTGRES_USER / --user), else a system
 * user made for it, else `nobody`. Every directory on the way to the cluster and to the
 * binaries must then be traversable by that user.
 */
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { LocalPostgresError } from './errors.ts';

export const DEFAULT_SERVER_USER = 'mcpgw-postgres';

export interface RunAs {
  name: string;
  uid: number;
  gid: number;
}

function lookUp(name: string): RunAs | undefined {
  try {
    const line = execFileSync('getent', ['passwd', name], { encoding: 'utf8', stdio: 'pipe' }).trim();
    const [, , uid, gid] = line.split(':');
    if (uid === undefined || gid === undefined) return undefined;
    return { name, uid: Number(uid), gid: Number(gid) };
  } catch {
    return undefined;
  }
}

/** undefined when this process is not root: then the server simply runs as this user. */
export function serverUser(named: string | undefined, log: (line: string) => void): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  if (named !== undefined) {
    const found = lookUp(named);
    if (!found || found.uid === 0) {
      throw new LocalPostgresError(
        'NO_USER',
        `user ${named} (--user / LOCAL_POSTGRES_USER) ${found ? 'is root' : 'does not exist'}: Postgres will not run as root, name an existing unprivileged user`,
      );
    }
    return found;
  }
  const existing = lookUp(DEFAULT_SERVER_USER);
  if (existing) return existing;
  try {
    execFileSync(
      'useradd',
      ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', DEFAULT_SERVER_USER],
      { stdio: 'pipe' },
    );
    log(`created the system user ${DEFAULT_SERVER_USER} to run Postgres (it refuses to run as root)`);
  } catch {}
  const made = lookUp(DEFAULT_SERVER_USER) ?? lookUp('nobody');
  if (made && made.uid !== 0) return made;
  throw new LocalPostgresError(
    'NO_USER',
    `running as root, and no unprivileged user to run Postgres as: useradd ${DEFAULT_SERVER_USER} failed and there is no nobody; create a user and pass --user NAME`,
  );
}

/**
 * Adds o+x (traverse, not list) to each directory above `path` that the user cannot enter:
 * a private mkdtemp or /root would otherwise stop initdb with "could not change directory".
 */
export async function makeTraversable(path: string, user: RunAs, log: (line: string) => void): Promise<void> {
  let dir = dirname(resolve(path));
  const chain: string[] = [];
  for (;;) {
    chain.unshift(dir);
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  for (const dir of chain) {
    const stat = statSync(dir);
    const mode = stat.mode & 0o777;
    const canEnter =
      stat.uid === user.uid ? mode & 0o100 : stat.gid === user.gid ? mode & 0o010 : mode & 0o001;
    if (canEnter) continue;
    await chmod(dir, mode | 0o001);
    log(`made ${dir} traversable (o+x) for ${user.name}`);
  }
}
