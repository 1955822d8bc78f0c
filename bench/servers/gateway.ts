/** Our gateway, front end only: tools/list and 401s never reach the broker worker. */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGatewayConfig } from '../../gateway/config.ts';
import { ApiKeyStore } from '../../gateway/keys/store.ts';
import { createLogger } from '../../gateway/logger.ts';
import { keyStorePath, startGateway } from '../../gateway/server.ts';
import { announce } from './ready.ts';

const dataDir = process.env.DATA_DIR ?? (await mkdtemp(join(tmpdir(), 'mcp-bench-gw-')));
const store = new ApiKeyStore(keyStorePath(dataDir));
const { key } = store.create('bench');
store.close();
const config = loadGatewayConfig({ ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' });
const gateway = await startGateway({
  config,
  log: createLogger('silent'),
  broker: {
    call: () =>
      Promise.reject(
        Object.assign(new Error('no broker worker in this benchmark'), { code: 'WORKER_UNREACHABLE' }),
      ),
  },
});
announce({ port: gateway.port, key, engine: gateway.engine, build: gateway.build });
