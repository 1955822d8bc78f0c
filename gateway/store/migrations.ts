import { type PgClient, type PgPool, withPgTransaction } from './postgres.ts';
import type { SqliteDatabase } from './sqlite.ts';

/**
 * One schema step of one component. Versions start at 1 and grow by one; a step never
 * changes once released (add a new one instead). `up` is SQL, or a function for steps
 * that need logic.
 */
export interface SqliteMigration {
  version: number;
  name: string;
  up: string | ((db: SqliteDatabase) => void);
}

export interface PgMigration {
  version: number;
  name: string;
  up: string | ((client: PgClient) => Promise<void>);
}

export class MigrationError extends Error {}

const TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  component TEXT NOT NULL,
  version INTEGER NOT NULL,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL,
  PRIMARY KEY (component, version)
)`;

function checkList(component: string, migrations: readonly { version: number }[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new MigrationError(
        `${component} migrations must be numbered 1, 2, 3…; found ${migration.version}`,
      );
    }
  });
}

function refuseNewer(component: string, current: number, known: number): void {
  // A database migrated by a newer build may hold columns this build would misuse.
  if (current > known) {
    throw new MigrationError(
      `the ${component} schema is at version ${current}, newer than this build knows (${known}); run the newer build or restore a backup`,
    );
  }
}

/**
 * Brings a component's schema up to date. The whole check-and-apply runs in one
 * IMMEDIATE transaction, so threads or processes starting together on one data dir
 * apply each step exactly once (the others wait on the write lock, then see it done).
 * Returns the versions applied by this call.
 */
export function runSqliteMigrations(
  db: SqliteDatabase,
  component: string,
  migrations: readonly SqliteMigration[],
): number[] {
  checkList(component, migrations);
  db.exec(TABLE);
  const apply = db.transaction(() => {
    const row = db
      .prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations WHERE component = ?')
      .get(component) as { v: number };
    refuseNewer(component, row.v, migrations.length);
    const applied: number[] = [];
    for (const migration of migrations.slice(row.v)) {
      if (typeof migration.up === 'string') db.exec(migration.up);
      else migration.up(db);
      db.prepare(
        'INSERT INTO schema_migrations (component, version, name, applied_at) VALUES (?, ?, ?, ?)',
      ).run(component, migration.version, migration.name, new Date().toISOString());
      applied.push(migration.version);
    }
    return applied;
  });
  return apply.immediate();
}

/**
 * The same for Postgres: a transaction-scoped advisory lock serialises gateways starting
 * together against one server, and DDL is transactional, so a failed step leaves nothing.
 */
export async function runPgMigrations(
  pool: PgPool,
  component: string,
  migrations: readonly PgMigration[],
): Promise<number[]> {
  checkList(component, migrations);
  return withPgTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('schema_migrations'))");
    await client.query(TABLE);
    const { rows } = await client.query<{ v: number }>(
      'SELECT COALESCE(MAX(version), 0)::int AS v FROM schema_migrations WHERE component = $1',
      [component],
    );
    const current = rows[0]?.v ?? 0;
    refuseNewer(component, current, migrations.length);
    const applied: number[] = [];
    for (const migration of migrations.slice(current)) {
      if (typeof migration.up === 'string') await client.query(migration.up);
      else await migration.up(client);
      await client.query(
        'INSERT INTO schema_migrations (component, version, name, applied_at) VALUES ($1, $2, $3, $4)',
        [component, migration.version, migration.name, new Date().toISOString()],
      );
      applied.push(migration.version);
    }
    return applied;
  });
}
