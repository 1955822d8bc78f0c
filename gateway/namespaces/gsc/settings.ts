import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { envSetting } from '../../mcp/namespace-contract.ts';
import { baseUrl, envFlag, type Readiness } from '../../upstream/namespace-kit.ts';
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
 * The settings as the namespace contract parses them, every one optional (`.partial()`): each
 * checked for form, so a malformed one is refused naming it (SETTINGS_INVALID); this is the
 * only place those rules are written.
 * Credentials are read and checked by loadGscSettings, which reports a missing or unreadable
 * key file per call as NOT_CONFIGURED.
 */
export const gscSettings = z
  .object({
    GSC_API_BASE_URL: envSetting.url(),
    GSC_OAUTH_TOKEN_URL: envSetting.url(),
    GSC_CREDENTIALS_JSON: envSetting.text(),
    GSC_CREDENTIALS_PATH: envSetting.text(),
    GOOGLE_APPLICATION_CREDENTIALS: envSetting.text(),
    GSC_IMPERSONATE_SUBJECT: envSetting.text(),
    GSC_ALLOW_WRITE: envSetting.text(),
    GSC_ALLOW_DESTRUCTIVE: envSetting.text(),
    GSC_ALLOWED_SITES: envSetting.text(),
    GSC_DATA_STATE: envSetting.oneOf(['all', 'final']),
    GSC_TIMEOUT_MS: envSetting.int(1_000, 120_000),
    GSC_MAX_ROWS: envSetting.int(1, 1_000_000),
  })
  .partial();

/** The settings as the schema leaves them: each present one already checked for form. */
export type GscEnv = z.output<typeof gscSettings>;

/** Where the credentials JSON comes from, in order; the first one set is used. */
const SOURCES = ['GSC_CREDENTIALS_JSON', 'GSC_CREDENTIALS_PATH', 'GOOGLE_APPLICATION_CREDENTIALS'] as const;

interface CredentialsFound {
  credentials: GoogleCredentials | null;
  /** The setting (and file) they came from; null when none is set. */
  authSource: string | null;
  problems: string[];
}

/**
 * Reads and parses the credentials named by the first source set. Whether a file can be read
 * and what it holds is not a question of form, so it is a problem the tools report per call
 * (NOT_CONFIGURED), not a refused setting.
 */
function readCredentials(env: GscEnv, tokenUrl: string): CredentialsFound {
  const problems: string[] = [];
  const source = SOURCES.find((name) => env[name]?.trim());
  if (!source) return { credentials: null, authSource: null, problems };
  const value = env[source]?.trim() ?? '';
  const authSource = source === 'GSC_CREDENTIALS_JSON' ? source : `${source} (${value})`;
  let text: string | null = null;
  if (source === 'GSC_CREDENTIALS_JSON') text = value;
  else {
    try {
      text = readFileSync(value, 'utf8');
    } catch (error) {
      problems.push(`${source}: cannot read ${value} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  let credentials: GoogleCredentials | null = null;
  if (text !== null) {
    try {
      credentials = parseCredentials(text);
    } catch (error) {
      problems.push(`${source} ${(error as Error).message}`);
    }
  }
  if (credentials?.type === 'service_account' && credentials.tokenUri && credentials.tokenUri !== tokenUrl) {
    // A key file must not redirect the signed assertion elsewhere: GSC_OAUTH_TOKEN_URL decides.
    problems.push(`the key file's token_uri differs from GSC_OAUTH_TOKEN_URL; using GSC_OAUTH_TOKEN_URL`);
  }
  return { credentials, authSource, problems };
}

/**
 * Read once at start from the settings the contract parsed (gscSettings checked each one's
 * form). Nothing here throws: missing, unreadable or malformed credentials become problems
 * the tools report, so the gateway keeps running.
 */
export function loadGscSettings(env: GscEnv): GscSettings {
  const apiBaseUrl = baseUrl(env.GSC_API_BASE_URL, DEFAULT_API_BASE_URL);
  const tokenUrl = baseUrl(env.GSC_OAUTH_TOKEN_URL, DEFAULT_TOKEN_URL);
  const { credentials, authSource, problems } = readCredentials(env, tokenUrl);

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

  return {
    apiBaseUrl,
    tokenUrl,
    credentials,
    subject: credentials?.type === 'service_account' ? subject : undefined,
    allowWrite,
    allowDestructive,
    allowedSites,
    dataState: env.GSC_DATA_STATE === 'final' ? 'final' : 'all',
    timeoutMs: Number(env.GSC_TIMEOUT_MS ?? 30_000),
    maxRows: Number(env.GSC_MAX_ROWS ?? 100_000),
    // Least privilege: the write scope only when an operator enabled writes or deletes.
    scope: allowWrite || allowDestructive ? SCOPE_FULL : SCOPE_READONLY,
    readiness: {
      ready: credentials !== null,
      authSource,
      missingSettings: authSource
        ? []
        : ['GSC_CREDENTIALS_JSON (or GSC_CREDENTIALS_PATH / GOOGLE_APPLICATION_CREDENTIALS)'],
      problems: authSource
        ? problems
        : [
            'no Google credentials: set GSC_CREDENTIALS_JSON, GSC_CREDENTIALS_PATH or GOOGLE_APPLICATION_CREDENTIALS',
            ...problems,
          ],
    },
  };
}
