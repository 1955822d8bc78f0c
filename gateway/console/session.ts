/**
 * Console sessions: a random token in an HttpOnly, SameSite=Strict cookie, stored only as
 * its SHA-256 hash. A token is minted at sign-in and never taken from the client, so a
 * cookie planted before sign-in (session fixation) grants nothing.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AccountSecrets, Session, StateStore } from '../accounts/model.ts';

export interface CookieNames {
  session: string;
  preSignIn: string;
}

export function cookieNames(secure: boolean): CookieNames {
  // __Host- cookies are bound to this origin and path /, and browsers demand Secure for them.
  return secure
    ? { session: '__Host-mcp_console', preSignIn: '__Host-mcp_console_pre' }
    : { session: 'mcp_console', preSignIn: 'mcp_console_pre' };
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    // The first occurrence wins, as browsers send the most specific cookie first.
    if (!cookies.has(name)) cookies.set(name, part.slice(at + 1).trim());
  }
  return cookies;
}

export function setCookie(name: string, value: string, secure: boolean, maxAgeSeconds?: number): string {
  const parts = [`${name}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Strict'];
  if (secure) parts.push('Secure');
  if (maxAgeSeconds !== undefined) parts.push(`Max-Age=${maxAgeSeconds}`);
  return parts.join('; ');
}

export function clearCookie(name: string, secure: boolean): string {
  return setCookie(name, '', secure, 0);
}

export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

export function tokensEqual(a: string | undefined | null, b: string | undefined | null): boolean {
  if (!a || !b) return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export interface ActiveSession {
  idHash: Buffer;
  session: Session;
  account: AccountSecrets;
}

/** The signed-in account behind a request's cookie, or undefined (expired, disabled, unknown). */
export async function loadSession(
  store: StateStore,
  token: string | undefined,
): Promise<ActiveSession | undefined> {
  if (!token || !TOKEN_SHAPE.test(token)) return undefined;
  const idHash = hashToken(token);
  const session = await store.sessionByHash(idHash);
  if (!session) return undefined;
  if (Date.parse(session.expiresAt) <= Date.now()) {
    await store.deleteSession(idHash);
    return undefined;
  }
  const account = await store.accountById(session.accountId);
  if (!account || account.disabledAt) return undefined;
  return { idHash, session, account };
}

/** A fresh token and CSRF secret for a new sign-in. */
export async function startSession(
  store: StateStore,
  accountId: string,
  ttlMs: number,
): Promise<{ token: string; session: Session }> {
  const token = randomToken();
  const now = Date.now();
  const session: Session = {
    accountId,
    csrfToken: randomToken(),
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + ttlMs).toISOString(),
  };
  await store.purgeExpiredSessions(new Date(now));
  await store.createSession(hashToken(token), session);
  return { token, session };
}
