/**
 * `npm run keys -- create --label L [--owner O] [--json] | list [--json] | revoke ID`
 * The key is printed once, at creation; the store keeps only its hash.
 */
import { parseArgs } from 'node:util';
import { loadGatewayConfig } from '../config.ts';
import { NAMESPACE_FACTORIES } from '../namespaces/registry.ts';
import { keyStorePath } from '../server.ts';
import { mcpServersEntry } from './client-config.ts';
import { ApiKeyStore } from './store.ts';

const USAGE = `usage:
  npm run keys -- create --label LABEL [--owner OWNER] [--json]
  npm run keys -- list [--json]
  npm run keys -- revoke KEY_ID`;

function fail(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

function main(): void {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      label: { type: 'string' },
      owner: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const [command, ...rest] = positionals;
  const config = loadGatewayConfig();
  const store = new ApiKeyStore(keyStorePath(config.DATA_DIR));
  try {
    if (command === 'create') {
      const label = values.label?.trim();
      if (!label) fail('create needs --label');
      const created = store.create(label, values.owner?.trim() || null);
      const baseUrl = process.env.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`;
      const clientConfig = mcpServersEntry(baseUrl, Object.keys(NAMESPACE_FACTORIES), created.key);
      if (values.json) {
        console.log(
          JSON.stringify({
            key: created.key,
            id: created.id,
            label: created.label,
            owner: created.owner,
            ...clientConfig,
          }),
        );
        return;
      }
      console.log(
        `Created key ${created.id} (${created.label}). It is shown only this once:\n\n  ${created.key}\n`,
      );
      console.log('Client configuration:\n');
      console.log(JSON.stringify(clientConfig, null, 2));
      return;
    }
    if (command === 'list') {
      const records = store.list();
      if (values.json) {
        console.log(JSON.stringify(records));
        return;
      }
      if (records.length === 0) {
        console.log('no keys');
        return;
      }
      console.table(
        records.map((r) => ({
          id: r.id,
          label: r.label,
          owner: r.owner ?? '',
          created: r.createdAt,
          lastUsed: r.lastUsedAt ?? '',
          revoked: r.revokedAt ?? '',
        })),
      );
      return;
    }
    if (command === 'revoke') {
      const id = rest[0];
      if (!id) fail('revoke needs a key id (see `npm run keys -- list`)');
      if (!store.revoke(id)) {
        console.error(`no key with id ${id}`);
        process.exitCode = 1;
        return;
      }
      console.log(`revoked ${id}; gateways stop admitting it within API_KEY_CACHE_TTL_MS (default 5 s)`);
      return;
    }
    fail(command ? `unknown command: ${command}` : 'missing command');
  } finally {
    store.close();
  }
}

main();
