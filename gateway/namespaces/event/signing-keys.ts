/**
 * Signing keys for publisher provenance, read once from the environment.
 *
 * One current signing key (an HMAC secret or an Ed25519 private key) and any number of
 * older verify-only keys. A key's id is derived from the key itself, so every gateway host
 * given the same key names it the same way, a restart changes nothing, and rotating means
 * moving the old key to the verify list: records signed with it keep verifying by id.
 */
import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  createSecretKey,
  type KeyObject,
  sign,
  timingSafeEqual,
  verify,
} from 'node:crypto';
import { z } from 'zod';
import { ConfigError } from '../../config.ts';

export type SigningAlgorithm = 'hmac-sha256' | 'ed25519';

export interface VerifyKey {
  id: string;
  algorithm: SigningAlgorithm;
  /** Ed25519 only: what outside consumers verify with. */
  publicKeyPem?: string;
  verify(data: Buffer, signature: Buffer): boolean;
}

export interface SigningKey extends VerifyKey {
  sign(data: Buffer): Buffer;
}

export interface KeyRing {
  /** Null when no signing key is configured: records are stamped but not signed. */
  signing: SigningKey | null;
  /** Every key a signature may name, the signing key first. */
  all: VerifyKey[];
  verifier(id: string): VerifyKey | undefined;
}

const SECRET_MIN_LENGTH = 32;

function hmacKey(secret: string): SigningKey {
  const key = createSecretKey(Buffer.from(secret, 'utf8'));
  // Derived with the secret as HMAC key, so the id reveals nothing usable about the secret.
  const id = `hs256-${createHmac('sha256', key).update('mcp-event-key-id').digest('base64url').slice(0, 12)}`;
  return {
    id,
    algorithm: 'hmac-sha256',
    sign: (data) => createHmac('sha256', key).update(data).digest(),
    verify(data, signature) {
      const expected = createHmac('sha256', key).update(data).digest();
      return signature.length === expected.length && timingSafeEqual(signature, expected);
    },
  };
}

function ed25519Id(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return `ed25519-${createHash('sha256').update(der).digest('base64url').slice(0, 12)}`;
}

function ed25519Verifier(publicKey: KeyObject): VerifyKey {
  return {
    id: ed25519Id(publicKey),
    algorithm: 'ed25519',
    publicKeyPem: String(publicKey.export({ type: 'spki', format: 'pem' })),
    verify: (data, signature) => signature.length === 64 && verify(null, data, publicKey, signature),
  };
}

function ed25519Key(privateKey: KeyObject): SigningKey {
  return { ...ed25519Verifier(createPublicKey(privateKey)), sign: (data) => sign(null, data, privateKey) };
}

/** PEM in one environment line: literal "\n" sequences stand for newlines. */
function pemText(raw: string): string {
  return raw.replace(/\\n/g, '\n').trim();
}

const secret = z
  .string()
  .min(
    SECRET_MIN_LENGTH,
    `must be at least ${SECRET_MIN_LENGTH} characters (for example: openssl rand -base64 32)`,
  );

const privateKeyPem = z.string().transform((raw, ctx) => {
  try {
    const key = createPrivateKey(pemText(raw));
    if (key.asymmetricKeyType === 'ed25519') return key;
    ctx.addIssue({ code: 'custom', message: `must be an Ed25519 key, not ${key.asymmetricKeyType}` });
  } catch {
    ctx.addIssue({
      code: 'custom',
      message: 'must be an Ed25519 private key in PKCS#8 PEM (openssl genpkey -algorithm ed25519)',
    });
  }
  return z.NEVER;
});

const publicKeyList = z.string().transform((raw, ctx) => {
  const keys: KeyObject[] = [];
  for (const block of pemText(raw).match(/-----BEGIN [^-]+-----[\s\S]*?-----END [^-]+-----/g) ?? []) {
    try {
      const key = createPublicKey(block);
      if (key.asymmetricKeyType === 'ed25519') {
        keys.push(key);
        continue;
      }
    } catch {
      // reported below
    }
    ctx.addIssue({ code: 'custom', message: 'each entry must be an Ed25519 public key in SPKI PEM' });
    return z.NEVER;
  }
  if (keys.length === 0) {
    ctx.addIssue({ code: 'custom', message: 'holds no PEM public key (-----BEGIN PUBLIC KEY-----)' });
  }
  return keys;
});

const secretList = z.string().transform((raw, ctx) => {
  const secrets = raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  if (secrets.some((item) => item.length < SECRET_MIN_LENGTH)) {
    ctx.addIssue({
      code: 'custom',
      message: `each comma-separated secret must be at least ${SECRET_MIN_LENGTH} characters`,
    });
  }
  return secrets;
});

const signingFields = z.object({
  /** HMAC-SHA256 secret shared by every gateway host. */
  EVENT_SIGNING_SECRET: secret.optional(),
  /** Ed25519 private key (PKCS#8 PEM), for consumers outside the gateway that verify with the public key. */
  EVENT_SIGNING_PRIVATE_KEY: privateKeyPem.optional(),
  /** Retired HMAC secrets, comma-separated: verify only. */
  EVENT_VERIFY_SECRETS: secretList.optional(),
  /** Retired Ed25519 public keys, PEM blocks one after another: verify only. */
  EVENT_VERIFY_PUBLIC_KEYS: publicKeyList.optional(),
});

/** The event namespace's settings: its signing keys. None set parses: records are stamped, not signed. */
export const signingSettings = signingFields.superRefine((settings, ctx) => {
  if (settings.EVENT_SIGNING_SECRET !== undefined && settings.EVENT_SIGNING_PRIVATE_KEY !== undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['EVENT_SIGNING_PRIVATE_KEY'],
      message:
        'EVENT_SIGNING_SECRET and EVENT_SIGNING_PRIVATE_KEY are both set; set one signing key and move the other to EVENT_VERIFY_SECRETS or EVENT_VERIFY_PUBLIC_KEYS',
    });
});

export type SigningSettings = z.output<typeof signingSettings>;

/** The key ring parsed settings describe. */
export function keyRingOf(settings: SigningSettings): KeyRing {
  let signing: SigningKey | null = null;
  if (settings.EVENT_SIGNING_SECRET !== undefined) signing = hmacKey(settings.EVENT_SIGNING_SECRET);
  if (settings.EVENT_SIGNING_PRIVATE_KEY !== undefined)
    signing = ed25519Key(settings.EVENT_SIGNING_PRIVATE_KEY);
  const all: VerifyKey[] = signing ? [signing] : [];
  for (const old of settings.EVENT_VERIFY_SECRETS ?? []) all.push(hmacKey(old));
  for (const old of settings.EVENT_VERIFY_PUBLIC_KEYS ?? []) all.push(ed25519Verifier(old));
  const byId = new Map<string, VerifyKey>();
  for (const key of all) if (!byId.has(key.id)) byId.set(key.id, key);
  return { signing, all: [...byId.values()], verifier: (id) => byId.get(id) };
}

/**
 * Parses the signing settings outside the gateway (tests, tools); a bad one throws a
 * ConfigError naming the variable, never its value. The gateway parses them through the
 * namespace contract instead, which mounts the namespace and refuses its tools.
 */
export function loadKeyRing(env: Readonly<Record<string, string | undefined>>): KeyRing {
  const present = Object.fromEntries(
    Object.keys(signingFields.shape)
      .filter((name) => env[name] !== undefined && env[name] !== '')
      .map((name) => [name, env[name]]),
  );
  const parsed = signingSettings.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  return keyRingOf(parsed.data);
}
