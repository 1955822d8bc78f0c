/**
 * `npm run dev`'s API key, kept across restarts so a configured MCP client keeps working:
 * the secret lives in DATA_DIR/dev-key.json (owner-only, like the stores beside it), and a
 * new key is minted only when that one no longer gets in (missing, revoked, expired,
 * rotated out, or the store was replaced).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StateStore } from '../gateway/accounts/model.ts';
import { ApiKeyAuthenticator } from '../gateway/auth/api-key-auth.ts';
import { FULL_SCOPES } from '../gateway/core/scopes.ts';

export const DEV_KEY_FILE = 'dev-key.json';

export interface DevKey {
  id: string;
  key: string;
  /** False when this run minted it. */
  reused: boolean;
  /** Why the kept key was not reused, when it was not. */
  replaced?: string;
}

async function keptKey(dataDir: string): Promise<{ id: string; key: string } | null> {
  try {
    const kept = JSON.parse(await readFile(join(dataDir, DEV_KEY_FILE), 'utf8')) as {
      id?: unknown;
      key?: unknown;
    };
    return typeof kept.id === 'string' && typeof kept.key === 'string'
      ? { id: kept.id, key: kept.key }
      : null;
  } catch {
    return null;
  }
}

/** The same check the gateway makes, so a key reused here is one the gateway admits. */
async function stillAdmitted(store: StateStore, kept: { id: string; key: string }): Promise<string | null> {
  const outcome = await new ApiKeyAuthenticator(store, {
    positiveTtlMs: 0,
    negativeMaxEntries: 1,
  }).authenticate(kept.key);
  if (!outcome.ok) return outcome.reason;
  return outcome.apiKeyId === kept.id ? null : 'another key';
}

async function keep(dataDir: string, id: string, key: string): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const temporary = join(dataDir, `${DEV_KEY_FILE}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(temporary, `${JSON.stringify({ id, key }, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, join(dataDir, DEV_KEY_FILE));
  } finally {
    await rm(temporary, { force: true });
  }
}

export async function devKey(store: StateStore, dataDir: string, ownerId: string): Promise<DevKey> {
  const kept = await keptKey(dataDir);
  const refusal = kept ? await stillAdmitted(store, kept) : 'missing';
  if (kept && refusal === null) return { ...kept, reused: true };
  const created = await store.createKey({ label: 'dev', ownerId, scopes: FULL_SCOPES, expiresAt: null });
  await keep(dataDir, created.id, created.key);
  return { id: created.id, key: created.key, reused: false, replaced: refusal ?? 'missing' };
}
