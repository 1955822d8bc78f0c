/** Argon2id (memory-hard) through @node-rs/argon2: prebuilt binaries, no compiler needed. */
import type * as Argon2 from '@node-rs/argon2';
import { lazyRequire } from '../../shared/lazy-require.ts';

const argon2 = lazyRequire<typeof Argon2>('@node-rs/argon2');

const MIN_PASSWORD_LENGTH = 10;
const MAX_PASSWORD_LENGTH = 1024;

/** Says what is wrong with a new password, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH)
    return `Use a password of at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > MAX_PASSWORD_LENGTH)
    return `Use a password of at most ${MAX_PASSWORD_LENGTH} characters.`;
  return null;
}

export function hashPassword(password: string): Promise<string> {
  // The library's defaults are OWASP's argon2id minimum (19 MiB, 2 passes, 1 lane).
  return argon2().hash(password);
}

let dummyHash: Promise<string> | undefined;

/**
 * Verifies against the stored hash, or against a throwaway hash when there is none, so an
 * unknown email costs the same time as a wrong password and does not reveal the account.
 */
export async function verifyPassword(storedHash: string | null, password: string): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  if (storedHash === null) {
    dummyHash ??= argon2().hash('not-a-real-password-but-the-same-cost');
    await argon2()
      .verify(await dummyHash, password)
      .catch(() => false);
    return false;
  }
  try {
    return await argon2().verify(storedHash, password);
  } catch {
    return false;
  }
}
