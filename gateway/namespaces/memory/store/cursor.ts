import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { CursorError } from './common.ts';

/** Where each store keeps its cursor secret (its `memory_settings` table). */
export const CURSOR_SECRET_SETTING = 'cursor_secret';

/** A new secret for a store that has none yet: 32 random bytes, base64. */
export function newCursorSecret(): string {
  return randomBytes(32).toString('base64');
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Paging cursors, sealed (AES-256-GCM) with the store's secret and bound to the API key
 * they were given to. A cursor holds the store's own row numbers, which are counted across
 * every key: in the clear, the gap between two of a key's rows told it how many memories
 * other keys had written meanwhile. Sealed, a cursor shows nothing, one another key presents
 * fails to open (the key id is the cipher's associated data), and one the gateway did not
 * make is refused, as INVALID_CURSOR promises. The secret lives in the store, so every
 * thread and process sharing it opens each other's cursors.
 */
export class CursorSeal {
  private readonly secret: Buffer;

  constructor(secret: string) {
    this.secret = Buffer.from(secret, 'base64');
  }

  seal(apiKeyId: string, parts: (string | number)[]): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.secret, iv);
    cipher.setAAD(Buffer.from(apiKeyId));
    const body = Buffer.concat([cipher.update(JSON.stringify(parts)), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The parts of a cursor sealed for this key, whose first part is `tag`; CursorError otherwise. */
  open(apiKeyId: string, cursor: string, tag: string, length: number): (string | number)[] {
    const raw = Buffer.from(cursor, 'base64url');
    if (raw.length <= IV_BYTES + TAG_BYTES) throw new CursorError();
    let parts: unknown;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.secret, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(apiKeyId));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const text = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
      parts = JSON.parse(text.toString('utf8'));
    } catch {
      throw new CursorError();
    }
    if (
      !Array.isArray(parts) ||
      parts.length !== length ||
      parts[0] !== tag ||
      !parts.every((p) => typeof p === 'number' || typeof p === 'string')
    ) {
      throw new CursorError();
    }
    return parts as (string | number)[];
  }
}
