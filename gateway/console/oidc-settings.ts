/**
 * The single sign-on settings, read at start: a partial set stops the gateway there, while
 * the console's pages and the OIDC client (oidc.ts) load on the first console request.
 */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  displayName: string;
}

/** The three settings come together or not at all. */
export function oidcSettings(config: {
  OIDC_ISSUER?: string | undefined;
  OIDC_CLIENT_ID?: string | undefined;
  OIDC_CLIENT_SECRET?: string | undefined;
  OIDC_NAME: string;
}): OidcSettings | undefined {
  const given = {
    OIDC_ISSUER: config.OIDC_ISSUER,
    OIDC_CLIENT_ID: config.OIDC_CLIENT_ID,
    OIDC_CLIENT_SECRET: config.OIDC_CLIENT_SECRET,
  };
  const missing = Object.entries(given)
    .filter(([, value]) => !value)
    .map(([name]) => name);
  if (missing.length === 3) return undefined;
  if (missing.length > 0) {
    throw new Error(
      `single sign-on needs OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET together; missing ${missing.join(', ')}`,
    );
  }
  return {
    issuer: config.OIDC_ISSUER as string,
    clientId: config.OIDC_CLIENT_ID as string,
    clientSecret: config.OIDC_CLIENT_SECRET as string,
    displayName: config.OIDC_NAME,
  };
}
