/** The gsc test stack: a loopback Google and five gateways with different gsc settings. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GoogleContract, SITE, startGoogleContract } from './contracts/google.ts';
import { startTestGateway, type TestGateway } from './gateway.ts';
import { connectNamespace, type NamespaceClient } from './mcp.ts';

export const RO_EMAIL = 'reader@test-project.iam.gserviceaccount.com';

export interface GscStack {
  gc: GoogleContract;
  /** Service-account file, read-only, GSC_DATA_STATE=all. */
  ro: NamespaceClient;
  /** Inline service account, writes and deletes enabled, delegation subject. */
  rw: NamespaceClient;
  /** Authorized-user file, writes (not deletes) enabled, allowlist of one property. */
  au: NamespaceClient;
  bare: NamespaceClient;
  broken: NamespaceClient;
  clients: NamespaceClient[];
  logLines: string[];
  secrets: string[];
  close(): Promise<void>;
}

export async function startGscStack(): Promise<GscStack> {
  const gc = await startGoogleContract();
  const dir = await mkdtemp(join(tmpdir(), 'gsc-test-'));
  const gateways: TestGateway[] = [];
  const clients: NamespaceClient[] = [];
  const logLines: string[] = [];
  const secrets: string[] = [];
  async function open(env: Record<string, string>): Promise<NamespaceClient> {
    const gw = await startTestGateway({
      env: { LOG_LEVEL: 'trace', ...env },
      logDestination: { write: (line: string) => logLines.push(line) },
    });
    gateways.push(gw);
    const client = await connectNamespace(gw, 'gsc');
    clients.push(client);
    return client;
  }

  const urls = { GSC_API_BASE_URL: gc.url, GSC_OAUTH_TOKEN_URL: gc.tokenUrl };
  const readKey = gc.serviceAccount(RO_EMAIL);
  const writeKey = gc.serviceAccount('writer@test-project.iam.gserviceaccount.com');
  const user = gc.authorizedUser();
  secrets.push(
    readKey.private_key ?? '',
    writeKey.private_key ?? '',
    user.client_secret ?? '',
    user.refresh_token ?? '',
  );
  await writeFile(join(dir, 'reader.json'), JSON.stringify(readKey));
  await writeFile(join(dir, 'user.json'), JSON.stringify(user));
  const ro = await open({ ...urls, GSC_CREDENTIALS_PATH: join(dir, 'reader.json'), GSC_DATA_STATE: 'all' });
  const rw = await open({
    ...urls,
    GSC_CREDENTIALS_JSON: JSON.stringify(writeKey),
    GSC_ALLOW_WRITE: 'true',
    GSC_ALLOW_DESTRUCTIVE: 'true',
    GSC_IMPERSONATE_SUBJECT: 'admin@example.com',
  });
  const au = await open({
    ...urls,
    GOOGLE_APPLICATION_CREDENTIALS: join(dir, 'user.json'),
    GSC_ALLOW_WRITE: 'true',
    GSC_ALLOWED_SITES: SITE,
  });
  const bare = await open({ GSC_API_BASE_URL: gc.url });
  const broken = await open({
    ...urls,
    GSC_CREDENTIALS_JSON: JSON.stringify({
      ...readKey,
      private_key: '-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n',
    }),
  });
  return {
    gc,
    ro,
    rw,
    au,
    bare,
    broken,
    clients,
    logLines,
    secrets,
    async close() {
      for (const client of clients) await client.close();
      for (const gw of gateways) await gw.close();
      await gc.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
