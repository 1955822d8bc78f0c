export {
  MigrationError,
  type PgMigration,
  runPgMigrations,
  runSqliteMigrations,
  type SqliteMigration,
} from './migrations.ts';
export { createPgPool, isPostgresUrl, type PgClient, type PgPool, withPgTransaction } from './postgres.ts';
export { openSqlite, type SqliteDatabase, sqlitePath } from './sqlite.ts';
export { startWalCheckpointer, type WalCheckpointer } from './sqlite-checkpoint.ts';
export { isStoreUnreachable, StateStoreUnavailableError } from './unreachable.ts';
