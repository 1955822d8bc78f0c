import { z } from 'zod';
import { envSetting } from '../../mcp/namespace-contract.ts';
import { baseUrl, type Readiness } from '../../upstream/namespace-kit.ts';
import { registerSecret } from '../../upstream/redact.ts';

export const DEFAULT_API_URL = 'https://api.producthunt.com/v2/api/graphql';
export const DEFAULT_TOKEN_URL = 'https://api.producthunt.com/v2/oauth/token';
/** The origin's names for a developer token; the first one set wins. */
export const TOKEN_SETTINGS = [
  'PRODUCTHUNT_TOKEN',
  'PRODUCTHUNT_DEVELOPER_TOKEN',
  'PRODUCTHUNT_ACCESS_TOKEN',
] as const;

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

/**
 * The settings as the namespace contract parses them: a malformed one is refused naming it
 * (SETTINGS_INVALID); this is the only place those rules are written.
 */
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

/** The settings as the schema leaves them: each present one already checked for form. */
export type ProductHuntEnv = z.output<typeof productHuntSettings>;

/**
 * Read once at start from the settings the contract parsed (productHuntSettings checked each
 * one's form). Nothing here throws: missing credentials, or half of a client-credentials
 * pair, become a problem the tools report per call, so the gateway keeps serving.
 */
export function loadProductHuntSettings(env: ProductHuntEnv): ProductHuntSettings {
  const problems: string[] = [];
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

  return {
    apiUrl: baseUrl(env.PRODUCTHUNT_API_URL, DEFAULT_API_URL),
    tokenUrl: baseUrl(env.PRODUCTHUNT_TOKEN_URL, DEFAULT_TOKEN_URL),
    timeoutMs: Number(env.PRODUCTHUNT_TIMEOUT_MS ?? 30_000),
    auth,
    readiness: {
      ready: auth !== null,
      authSource,
      missingSettings: auth
        ? []
        : ['PRODUCTHUNT_TOKEN (or PRODUCTHUNT_CLIENT_ID + PRODUCTHUNT_CLIENT_SECRET)'],
      problems: auth ? problems : ['no Product Hunt credentials: set PRODUCTHUNT_TOKEN', ...problems],
    },
  };
}
