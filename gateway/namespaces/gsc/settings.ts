import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { envSetting } from '../../mcp/namespace-contract.ts';
import { baseUrlSetting, envFlag, type Readiness } from '../../upstream/namespace-kit.ts';
import { type GoogleCredentials, parseCredentials, SCOPE_FULL, SCOPE_READONLY } from './credentials.ts';

export const DEFAULT_API_BASE_URL = 'https://searchconsole.googleapis.com';
export const DEFAULT_TOKEN_URL = 'https://oauth2.googleapis.com/token';

export interface GscSettings {
  apiBaseUrl: string;
  tokenUrl: string;
  credentials: GoogleCredentials | null;
  subject: string | undefined;
  allowWrite: boolean;
  allowDestructive: boolean;
  /** Empty: every property the credentials can see. */
  allowedSites: string[];
  dataState: 'all' | 'final';
  timeoutMs: number;
  /** Hard cap on rows fetched by one auto-paging call. */
  maxRows: number;
  scope: string;
  readiness: Readiness;
}

/**
 * The settings as the namespace contract parses them: each checked for form, so a malformed
 * one is refused naming it. Credentials are read and checked by loadGscSettings, which
 * reports a missing or unreadable key file per call as NOT_CONFIGURED.
 */
export const gscSettings = z.object({
  GSC_API_BASE_URL: envSetting.url().optional(),
  GSC_OAUTH_TOKEN_URL: envSetting.url().optional(),
  GSC_CREDENTIALS_JSON: envSetting.text().optional(),
  GSC_CREDENTIALS_PATH: envSetting.text().optional(),
  GOOGLE_APPLICATION_CREDENTIALS: envSetting.text().optional(),
  GSC_IMPERSONATE_SUBJECT: envSetting.text().optional(),
  GSC_ALLOW_WRITE: envSetting.text().optional(),
  GSC_ALLOW_DESTRUCTIVE: envSetting.text().optional(),
  GSC_ALLOWED_SITES: envSetting.text().optional(),
  GSC_DATA_STATE: envSetting.oneOf(['all', 'final']).optional(),
  GSC_TIMEOUT_MS: envSetting.int(1_000, 120_000).optional(),
  GSC_MAX_ROWS: envSetting.int(1, 1_000_000).optional(),
});

type Env = Readonly<Record<string, string | undefined>>;

/** Where the credentials JSON comes from, in order; the first one set is used. */
const SOURCES = ['GSC_CREDENTIALS_JSON', 'GSC_CREDENTIALS_PATH', 'GOOGLE_APPLICATION_CREDENTIALS'] as const;

function intSetting(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max: number,
  problems: string[],
): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (Number.isInteger(value) && value >= min && value <= max) return value;
  problems.push(`${name} must be an integer from ${min} to ${max}; using ${fallback}`);
  return fallback;
}

/**
 * Read once at start. Nothing here throws: missing or malformed credentials, unreadable files
 * and bad knobs become problems the tools report, so the gateway keeps running.
 */
export function loadGscSettings(env: Env): GscSettings {
  const problems: string[] = [];
  let fatal = false;
  const apiBaseUrl = baseUrlSetting(env, 'GSC_API_BASE_URL', DEFAULT_API_BASE_URL, problems);
  const tokenUrl = baseUrlSetting(env, 'GSC_OAUTH_TOKEN_URL', DEFAULT_TOKEN_URL, problems);
  if (apiBaseUrl === null || tokenUrl === null) fatal = true;

  let credentials: GoogleCredentials | null = null;
  let authSource: string | null = null;
  const source = SOURCES.find((name) => env[name]?.trim());
  if (source) {
    authSource = source === 'GSC_CREDENTIALS_JSON' ? source : `${source} (${env[source]?.trim()})`;
    let text: string | null = null;
    if (source === 'GSC_CREDENTIALS_JSON') text = env[source]?.trim() ?? null;
    else {
      try {
        text = readFileSync(env[source]?.trim() ?? '', 'utf8');
      } catch (error) {
        problems.push(
          `${source}: cannot read ${env[source]?.trim()} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
        );
      }
    }
    if (text !== null) {
      try {
        credentials = parseCredentials(text);
      } catch (error) {
        problems.push(`${source} ${(error as Error).message}`);
      }
    }
    if (
      credentials?.type === 'service_account' &&
      credentials.tokenUri &&
      credentials.tokenUri !== tokenUrl
    ) {
      // A key file must not redirect the signed assertion elsewhere: GSC_OAUTH_TOKEN_URL decides.
      problems.push(`the key file's token_uri differs from GSC_OAUTH_TOKEN_URL; using GSC_OAUTH_TOKEN_URL`);
    }
  }

  const rawState = env.GSC_DATA_STATE?.trim().toLowerCase();
  let dataState: 'all' | 'final' = 'all';
  if (rawState === 'final' || rawState === 'all') dataState = rawState;
  else if (rawState) problems.push('GSC_DATA_STATE must be "all" or "final"; using "all"');

  const allowWrite = envFlag(env.GSC_ALLOW_WRITE);
  const allowDestructive = envFlag(env.GSC_ALLOW_DESTRUCTIVE);
  const subject = env.GSC_IMPERSONATE_SUBJECT?.trim() || undefined;
  if (subject && credentials?.type === 'authorized_user') {
    problems.push('GSC_IMPERSONATE_SUBJECT only applies to service-account credentials; ignored');
  }
  const allowedSites = (env.GSC_ALLOWED_SITES ?? '')
    .split(',')
    .map((site) => site.trim())
    .filter(Boolean);

  const ready = credentials !== null && !fatal;
  const missingSettings = source
    ? []
    : ['GSC_CREDENTIALS_JSON (or GSC_CREDENTIALS_PATH / GOOGLE_APPLICATION_CREDENTIALS)'];
  return {
    apiBaseUrl: apiBaseUrl ?? DEFAULT_API_BASE_URL,
    tokenUrl: tokenUrl ?? DEFAULT_TOKEN_URL,
    credentials,
    subject: credentials?.type === 'service_account' ? subject : undefined,
    allowWrite,
    allowDestructive,
    allowedSites,
    dataState,
    timeoutMs: intSetting(env, 'GSC_TIMEOUT_MS', 30_000, 1_000, 120_000, problems),
    maxRows: intSetting(env, 'GSC_MAX_ROWS', 100_000, 1, 1_000_000, problems),
    // Least privilege: the write scope only when an operator enabled writes or deletes.
    scope: allowWrite || allowDestructive ? SCOPE_FULL : SCOPE_READONLY,
    readiness: {
      ready,
      authSource,
      missingSettings,
      problems: source
        ? problems
        : [
            'no Google credentials: set GSC_CREDENTIALS_JSON, GSC_CREDENTIALS_PATH or GOOGLE_APPLICATION_CREDENTIALS',
            ...problems,
          ],
    },
  };
}
