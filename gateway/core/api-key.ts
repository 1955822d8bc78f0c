import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'mcp_';
/** 24 random bytes = 192 bits, base64url: 32 characters after the prefix. */
const KEY_RANDOM_BYTES = 24;
const KEY_SHAPE = /^mcp_[A-Za-z0-9_-]{22,128}$/;

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(KEY_RANDOM_BYTES).toString('base64url');
}

/** A non-secret handle for a key, safe to log and show in listings. */
export function generateApiKeyId(): string {
  return `key_${randomBytes(9).toString('base64url')}`;
}

export function isWellFormedApiKey(candidate: string): boolean {
  return KEY_SHAPE.test(candidate);
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}
