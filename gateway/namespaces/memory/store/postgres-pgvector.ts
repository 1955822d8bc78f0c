/**
 * The pgvector the Postgres store needs, checked when the store starts (before its
 * migrations), so a server without it, or with one too old, is refused with one line naming
 * the extension and the version instead of failing later on a statement. 0.8.0 is the floor:
 * the store's searches set `hnsw.iterative_scan`, which older versions ignore, and their HNSW
 * scan then returns too few rows when other keys' rows crowd the nearest neighbours.
 */
import type { PgPool } from '../../../store/index.ts';

export const MIN_PGVECTOR = '0.8.0';

/** The server at DATABASE_URL cannot give memory the pgvector it needs; no retry helps. */
export class PgvectorUnusableError extends Error {
  override readonly name = 'PgvectorUnusableError';
}

/** `0.8.6` >= `0.8.0`; a version that is not dotted numbers counts as too old. */
export function pgvectorRecentEnough(version: string): boolean {
  const have = version.split('.').map(Number);
  const need = MIN_PGVECTOR.split('.').map(Number);
  if (have.some((part) => !Number.isInteger(part))) return false;
  for (let i = 0; i < need.length; i++) {
    const a = have[i] ?? 0;
    const b = need[i]!;
    if (a !== b) return a > b;
  }
  return true;
}

const FIX = `install pgvector ${MIN_PGVECTOR} or newer on the server DATABASE_URL names (memory on Postgres needs it; docs/memory.md)`;

/** Throws PgvectorUnusableError unless the database has, or can create, a recent enough pgvector. */
export async function checkPgvector(pool: PgPool): Promise<void> {
  const { rows } = await pool.query<{ installed: string | null; available: string | null }>(
    `SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS installed,
            (SELECT default_version FROM pg_available_extensions WHERE name = 'vector') AS available`,
  );
  const { installed, available } = rows[0] ?? { installed: null, available: null };
  if (installed !== null) {
    if (pgvectorRecentEnough(installed)) return;
    throw new PgvectorUnusableError(
      `the database has pgvector (extension "vector") ${installed}, older than the ${MIN_PGVECTOR} memory needs: ${FIX}, then run ALTER EXTENSION vector UPDATE`,
    );
  }
  if (available === null)
    throw new PgvectorUnusableError(`the Postgres server has no pgvector (extension "vector"): ${FIX}`);
  if (!pgvectorRecentEnough(available)) {
    throw new PgvectorUnusableError(
      `the Postgres server offers pgvector (extension "vector") ${available}, older than the ${MIN_PGVECTOR} memory needs: ${FIX}`,
    );
  }
  try {
    await pool.query('CREATE EXTENSION IF NOT EXISTS vector');
  } catch (error) {
    const code = (error as { code?: string }).code;
    // Another gateway created it at the same moment: it is there, which is all that counts.
    if (code === '23505' || code === '42710') return;
    if (code === '42501') {
      throw new PgvectorUnusableError(
        `the database user may not create the extension "vector" (pgvector ${available} is installed on the server): have a superuser run CREATE EXTENSION vector in this database once`,
      );
    }
    throw error;
  }
}
