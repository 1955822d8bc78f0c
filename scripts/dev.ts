/**
 * `npm run dev`: local Kafka (left running for the next time), a `tasks` topic, the dev key
 * (kept in DATA_DIR across restarts, see dev-key.ts), then the broker-worker and the gateway,
 * with the client configuration printed.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { localKafkaStatus, startLocalKafka } from '../dev/kafka/local-kafka.ts';
import { defaultDevDataDir } from '../dev/kafka/paths.ts';
import { openStateStore } from '../gateway/accounts/open.ts';
import { hashPassword } from '../gateway/accounts/passwords.ts';
import { loadGatewayConfig } from '../gateway/config.ts';
import { mcpServersEntry } from '../gateway/keys/client-config.ts';
import { NAMESPACES } from '../gateway/namespaces/registry.ts';
import { packageRoot } from '../shared/package-root.ts';
import { DEV_KEY_FILE, devKey } from './dev-key.ts';

const root = packageRoot(import.meta.dirname);
const DEV_TOPIC = 'tasks';
const DEV_EMAIL = 'dev@localhost';

const status = await localKafkaStatus(defaultDevDataDir);
const bootstrap = status.running
  ? status.plaintext
  : (
      await startLocalKafka({
        dataDir: defaultDevDataDir,
        detached: true,
        log: (line) => console.log(`[kafka] ${line}`),
      })
    ).plaintext;
console.log(`[dev] Kafka at ${bootstrap} (stop it with: npm run kafka -- stop)`);

// A cluster's bootstrap is a comma-separated list (`npm run kafka -- start --brokers 3`).
const admin = new Kafka({ brokers: bootstrap.split(','), logLevel: logLevel.NOTHING }).admin();
await admin.connect();
if (!(await admin.listTopics()).includes(DEV_TOPIC)) {
  // The broker's default replication factor: 1 on one broker, 3 on a three-broker cluster.
  await admin.createTopics({ topics: [{ topic: DEV_TOPIC, numPartitions: 3 }] });
}
await admin.disconnect();

const env = {
  ...process.env,
  BROKER_BOOTSTRAP_SERVERS: bootstrap,
  BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
  BROKER_DEFAULT_TOPIC: process.env.BROKER_DEFAULT_TOPIC ?? DEV_TOPIC,
  BROKER_CONSUMER_GROUP: process.env.BROKER_CONSUMER_GROUP ?? 'dev-workers',
  BROKER_ALLOW_TOPIC_ADMIN: process.env.BROKER_ALLOW_TOPIC_ADMIN ?? 'true',
};
const config = loadGatewayConfig(env);
const store = await openStateStore(config);
// A fresh password each run: it is printed below, so it must never be one worth keeping.
const devPassword = randomBytes(12).toString('base64url');
const devAccount = await store.accountByEmail(DEV_EMAIL);
if (devAccount) {
  await store.setPasswordHash(devAccount.id, await hashPassword(devPassword));
} else {
  await store.createAccount({ email: DEV_EMAIL, passwordHash: await hashPassword(devPassword), admin: true });
}
const created = await devKey(
  store,
  config.DATA_DIR,
  ((await store.accountByEmail(DEV_EMAIL)) as { id: string }).id,
);
await store.close();

const where = join(config.DATA_DIR, DEV_KEY_FILE);
console.log(
  created.reused
    ? `[dev] dev key ${created.id}, the same as last run (kept in ${where}); MCP client configuration:\n`
    : `[dev] new dev key ${created.id} (${created.replaced === 'missing' ? 'none kept yet' : `the kept one is ${created.replaced}`}; kept in ${where} for the next runs); MCP client configuration:\n`,
);
console.log(
  JSON.stringify(
    mcpServersEntry(
      `http://${config.HOST}:${config.PORT}`,
      NAMESPACES.map((namespace) => namespace.name),
      created.key,
    ),
    null,
    2,
  ),
);
console.log('');
console.log(`[dev] console: http://${config.HOST}:${config.PORT}/console`);
console.log(`[dev] sign in as ${DEV_EMAIL} with password ${devPassword} (local use only; new each run)\n`);

const stack = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
  cwd: root,
  stdio: 'inherit',
  env,
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stack.kill(signal));
stack.on('exit', (code) => process.exit(code ?? 0));
