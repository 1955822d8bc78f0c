import { z } from 'zod';
import { envSetting } from '../../mcp/namespace-contract.ts';
import { baseUrlSetting, type Readiness } from '../../upstream/namespace-kit.ts';
import { registerSecret } from '../../upstream/redact.ts';

export const DEFAULT_API_URL = 'https://api.producthunt.com/v2/api/graphql';
export const DEFAULT_TOKEN_URL = 'https://api.producthunt.com/v2/oauth/token';
/** The origin's names for a developer token; the first one set wins. */
export const TOKEN_SETTINGS = [
  'PRODUCTHUNT_TOKEN',
  'PRODUCTHUNT_DEVELOPER_TOKEN',
  'PRODUCTHUNT_ACCESS_TOKEN',
];

export type ProductHuntAuth =
  | { kind: 'token'; token: string }
  | { kind: 'client_credentials'; clientId: string; clientSecret: string };

export interface ProductHuntSettings {
  apiUrl: string;
  tokenUrl: string;
  timeoutMs: number;
  auth: ProductHuntAuth | null;
  readiness: Readiness;
}

/** The settings as the namespace contract parses them: a malformed one is refused naming it. */
export const productHuntSettings = z.object({
  PRODUCTHUNT_API_URL: envSetting.url().optional(),
  PRODUCTHUNT_TOKEN_URL: envSetting.url().optional(),
  PRODUCTHUNT_TIMEOUT_MS: envSetting.int(1_000, 120_000).optional(),
  PRODUCTHUNT_TOKEN: envSetting.text().optional(),
  PRODUCTHUNT_DEVELOPER_TOKEN: envSetting.text().optional(),
  PRODUCTHUNT_ACCESS_TOKEN: envSetting.text().optional(),
  PRODUCTHUNT_CLIENT_ID: envSetting.text().optional(),
  PRODUCTHUNT_CLIENT_SECRET: envSetting.text().optional(),
});

/**
 * Read once at start. Nothing here throws: a missing or bad setting becomes a problem the
 * tools report, so the gateway keeps serving its other namespaces.
 */
export function loadProductHuntSettings(
  env: Readonly<Record<string, string | undefined>>,
): ProductHuntSettings {
  const problems: string[] = [];
  const apiUrl = baseUrlSetting(env, 'PRODUCTHUNT_API_URL', DEFAULT_API_URL, problems);
  const tokenUrl = baseUrlSetting(env, 'PRODUCTHUNT_TOKEN_URL', DEFAULT_TOKEN_URL, problems);
  const rawTimeout = env.PRODUCTHUNT_TIMEOUT_MS?.trim();
  let timeoutMs = 30_000;
  if (rawTimeout) {
    const parsed = Number(rawTimeout);
    if (Number.isInteger(parsed) && parsed >= 1_000 && parsed <= 120_000) timeoutMs = parsed;
    else problems.push('PRODUCTHUNT_TIMEOUT_MS must be an integer from 1000 to 120000; using 30000');
  }

  let auth: ProductHuntAuth | null = null;
  let authSource: string | null = null;
  const tokenSetting = TOKEN_SETTINGS.find((name) => env[name]?.trim());
  const clientId = env.PRODUCTHUNT_CLIENT_ID?.trim();
  const clientSecret = env.PRODUCTHUNT_CLIENT_SECRET?.trim();
  if (tokenSetting) {
    auth = { kind: 'token', token: env[tokenSetting]?.trim() ?? '' };
    authSource = tokenSetting;
  } else if (clientId && clientSecret) {
    auth = { kind: 'client_credentials', clientId, clientSecret };
    authSource = 'PRODUCTHUNT_CLIENT_ID + PRODUCTHUNT_CLIENT_SECRET';
  } else if (clientId || clientSecret) {
    problems.push(
      `${clientId ? 'PRODUCTHUNT_CLIENT_SECRET' : 'PRODUCTHUNT_CLIENT_ID'} is missing: the client-credentials flow needs both`,
    );
  }
  registerSecret(auth?.kind === 'token' ? auth.token : undefined);
  registerSecret(clientSecret);
  registerSecret(clientId);

  const fatal = apiUrl === null || tokenUrl === null;
  return {
    apiUrl: apiUrl ?? DEFAULT_API_URL,
    tokenUrl: tokenUrl ?? DEFAULT_TOKEN_URL,
    timeoutMs,
    auth,
    readiness: {
      ready: auth !== null && !fatal,
      authSource,
      missingSettings: auth
        ? []
        : ['PRODUCTHUNT_TOKEN (or PRODUCTHUNT_CLIENT_ID + PRODUCTHUNT_CLIENT_SECRET)'],
      problems: auth ? problems : ['no Product Hunt credentials: set PRODUCTHUNT_TOKEN', ...problems],
    },
  };
}
