import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { loadGatewayConfig } from '../../gateway/config.ts';
import {
  createPgPool,
  openSqlite,
  type PgMigration,
  type PgPool,
  runPgMigrations,
  runSqliteMigrations,
  type SqliteMigration,
  sqlitePath,
} from '../../gateway/store/index.ts';
import { SQLITE_DRIVER } from '../../gateway/store/sqlite-driver.ts';
import { createTestDatabase, type TestPostgres } from '../support/postgres.ts';

const sqliteSteps: SqliteMigration[] = [
  { version: 1, name: 'things', up: 'CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT NOT NULL)' },
  {
    version: 2,
    name: 'seed',
    up: (db) => {
      db.prepare('INSERT INTO things (name) VALUES (?)').run('first');
    },
  },
];

describe('SQLite migrations', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'store-test-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('apply once, in order, and record each step per component', () => {
    const db = openSqlite(sqlitePath(dir, 'once'));
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.deepEqual(runSqliteMigrations(db, 'things', sqliteSteps), [1, 2]);
    assert.deepEqual(runSqliteMigrations(db, 'things', sqliteSteps), []);
    assert.equal((db.prepare('SELECT COUNT(*) AS n FROM things').get() as { n: number }).n, 1);
    // Another component in the same file keeps its own versions.
    assert.deepEqual(
      runSqliteMigrations(db, 'other', [{ version: 1, name: 'x', up: 'CREATE TABLE other_x (a)' }]),
      [1],
    );
    db.close();
  });

  test('a failing step leaves neither its changes nor its record', () => {
    const db = openSqlite(sqlitePath(dir, 'fail'));
    const broken: SqliteMigration[] = [
      ...sqliteSteps,
      { version: 3, name: 'bad', up: 'CREATE TABLE more (a); SELECT * FROM missing_table' },
    ];
    assert.throws(() => runSqliteMigrations(db, 'things', broken), /no such table: missing_table/);
    assert.equal(
      db.prepare("SELECT name FROM sqlite_master WHERE name IN ('things','more')").all().length,
      0,
    );
    assert.deepEqual(runSqliteMigrations(db, 'things', sqliteSteps), [1, 2]);
    db.close();
  });

  test('a database migrated by a newer build is refused with a message saying so', () => {
    const db = openSqlite(sqlitePath(dir, 'newer'));
    runSqliteMigrations(db, 'things', sqliteSteps);
    assert.throws(
      () => runSqliteMigrations(db, 'things', sqliteSteps.slice(0, 1)),
      /things schema is at version 2, newer than this build knows \(1\)/,
    );
    db.close();
  });

  test('several threads starting together on one data dir apply each step exactly once', async () => {
    const file = sqlitePath(dir, 'threads');
    const source = `
      const { workerData, parentPort } = require('node:worker_threads');
      const Database = require(workerData.driver);
      const db = new Database(workerData.file);
      db.pragma('busy_timeout = 5000'); db.pragma('journal_mode = WAL');
      db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (component TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (component, version))');
      parentPort.postMessage('ready');
    `;
    // Create the file first so every thread races on the migration itself.
    await new Promise<void>((resolve, reject) => {
      const w = new Worker(source, { eval: true, workerData: { file, driver: SQLITE_DRIVER } });
      w.once('message', () => resolve());
      w.once('error', reject);
    });
    const runner = new URL('./support/migrate-in-thread.mjs', import.meta.url);
    const results = await Promise.all(
      [0, 1, 2, 3].map(
        () =>
          new Promise<number[]>((resolve, reject) => {
            const w = new Worker(runner, { workerData: { file } });
            w.once('message', resolve);
            w.once('error', reject);
          }),
      ),
    );
    assert.deepEqual(results.flat().sort(), [1, 2]);
    const db = openSqlite(file);
    assert.equal((db.prepare('SELECT COUNT(*) AS n FROM things').get() as { n: number }).n, 1);
    db.close();
  });
});

describe('Postgres migrations (native PostgreSQL)', () => {
  let pgServer: TestPostgres;
  let pool: PgPool;
  before(async () => {
    pgServer = await createTestDatabase();
    pool = createPgPool(pgServer.url, { max: 4 });
    // A fresh database has no extensions; the memory store creates pgvector itself.
    await pool.query('CREATE EXTENSION vector');
  });
  after(async () => {
    await pool.end();
    await pgServer.close();
  });

  const steps: PgMigration[] = [
    { version: 1, name: 'things', up: 'CREATE TABLE things (id serial PRIMARY KEY, v vector(3))' },
    {
      version: 2,
      name: 'seed',
      up: async (client) => {
        await client.query("INSERT INTO things (v) VALUES ('[1,0,0]')");
      },
    },
  ];

  test('the URL is accepted as DATABASE_URL and pgvector is usable', async () => {
    assert.equal(loadGatewayConfig({ DATABASE_URL: pgServer.url }).DATABASE_URL, pgServer.url);
    const { rows } = await pool.query("SELECT '[1,0,0]'::vector <=> '[0,1,0]'::vector AS d");
    assert.equal(rows[0].d, 1);
  });

  test('apply once even when gateways start together, and roll back a failing step', async () => {
    const results = await Promise.all([0, 1, 2].map(() => runPgMigrations(pool, 'things', steps)));
    assert.deepEqual(results.flat().sort(), [1, 2]);
    assert.equal((await pool.query('SELECT COUNT(*)::int AS n FROM things')).rows[0].n, 1);
    const broken: PgMigration[] = [
      ...steps,
      { version: 3, name: 'bad', up: 'CREATE TABLE more (a int); SELECT * FROM nope' },
    ];
    await assert.rejects(runPgMigrations(pool, 'things', broken), /relation "nope" does not exist/);
    assert.equal((await pool.query("SELECT to_regclass('more') AS t")).rows[0].t, null);
    await assert.rejects(
      runPgMigrations(pool, 'things', steps.slice(0, 1)),
      /newer than this build knows \(1\)/,
    );
  });
});

test('a DATABASE_URL that is not a Postgres URL stops start-up naming the variable', () => {
  assert.throws(
    () => loadGatewayConfig({ DATABASE_URL: 'mysql://x' }),
    /DATABASE_URL: must be a postgres:\/\//,
  );
});
