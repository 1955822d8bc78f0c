import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite, runSqliteMigrations } from '../../../gateway/store/index.ts';

const db = openSqlite(workerData.file);
const applied = runSqliteMigrations(db, 'things', [
  { version: 1, name: 'things', up: 'CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT NOT NULL)' },
  {
    version: 2,
    name: 'seed',
    up: (d) => {
      d.prepare('INSERT INTO things (name) VALUES (?)').run('first');
    },
  },
]);
db.close();
parentPort?.postMessage(applied);
