import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LocalKafkaError, quoteOutput } from './errors.ts';
import { execTool } from './exec.ts';

export interface TlsMaterial {
  keystorePath: string;
  keystorePassword: string;
  caPemPath: string;
  caPem: string;
}

const ALIAS = 'localkafka';

/**
 * A self-signed certificate for the SASL_SSL listener, made once per data dir and reused across
 * restarts so a client that saved the PEM keeps trusting the broker. The certificate is its own
 * CA: exporting it as PEM is all a Node client needs for `ssl: { ca: [pem] }`. The SAN covers
 * both the IP and the name a client may dial, since Node checks the address it connected to.
 */
export async function ensureTlsMaterial(keytool: string, dir: string): Promise<TlsMaterial> {
  const keystorePath = join(dir, 'broker.p12');
  const passwordPath = join(dir, 'keystore-password');
  const caPemPath = join(dir, 'ca.pem');
  if (existsSync(keystorePath) && existsSync(passwordPath) && existsSync(caPemPath)) {
    return {
      keystorePath,
      keystorePassword: (await readFile(passwordPath, 'utf8')).trim(),
      caPemPath,
      caPem: await readFile(caPemPath, 'utf8'),
    };
  }

  await mkdir(dir, { recursive: true });
  const work = join(dir, `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(work);
  try {
    const password = randomBytes(18).toString('base64url');
    const store = join(work, 'broker.p12');
    await keytoolOrThrow(keytool, [
      '-genkeypair',
      '-alias',
      ALIAS,
      '-keyalg',
      'RSA',
      '-keysize',
      '2048',
      '-validity',
      '3650',
      '-dname',
      'CN=localhost, OU=local development, O=local-kafka',
      '-ext',
      'SAN=IP:127.0.0.1,DNS:localhost',
      '-ext',
      'BC:c=ca:true',
      '-storetype',
      'PKCS12',
      '-keystore',
      store,
      '-storepass',
      password,
      '-keypass',
      password,
      '-noprompt',
    ]);
    const pemPath = join(work, 'ca.pem');
    await keytoolOrThrow(keytool, [
      '-exportcert',
      '-rfc',
      '-alias',
      ALIAS,
      '-keystore',
      store,
      '-storetype',
      'PKCS12',
      '-storepass',
      password,
      '-file',
      pemPath,
    ]);
    await writeFile(join(work, 'keystore-password'), `${password}\n`, { mode: 0o600 });
    // The PEM goes last: its presence is what marks the set as complete.
    await rename(store, keystorePath);
    await rename(join(work, 'keystore-password'), passwordPath);
    await rename(pemPath, caPemPath);
    return { keystorePath, keystorePassword: password, caPemPath, caPem: await readFile(caPemPath, 'utf8') };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function keytoolOrThrow(keytool: string, args: string[]): Promise<void> {
  const result = await execTool(keytool, args, { timeoutMs: 60_000 });
  if ('missing' in result) {
    throw new LocalKafkaError(
      'TLS_FAILED',
      `keytool not found (${keytool}); it ships with every JDK: install a full JDK 17+ or set JAVA_HOME.`,
    );
  }
  if (result.code !== 0) {
    throw new LocalKafkaError(
      'TLS_FAILED',
      `keytool ${args[0]} failed (exit ${result.code ?? result.signal}) while making the SASL_SSL certificate.\n` +
        quoteOutput('keytool output', result.output),
    );
  }
}
