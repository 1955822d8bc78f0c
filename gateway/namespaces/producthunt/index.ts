import type { Logger } from 'pino';
import { defineNamespace } from '../../mcp/namespace-contract.ts';
import { requireReady, UPSTREAM_ERROR_CODES, upstreamCapabilities } from '../../upstream/namespace-kit.ts';
import { deferredParts } from '../deferred.ts';
import { loadProductHuntSettings, productHuntSettings } from './settings.ts';
import { REDACTION_NOTE, UNTRUSTED } from './shape.ts';
import type { ProductHuntToolDeps } from './tool-kit.ts';

/** What the producthunt namespace uses of what the registry hands every namespace. */
export interface ProductHuntDependencies {
  log: Logger;
  now?: () => number;
}

const INSTRUCTIONS = `Read Product Hunt (API v2): launches, the daily leaderboard (Pacific-time days), posts, comments, topics, collections and users. Read-only. Call producthunt_capabilities first when a tool fails. Every result carries rate_limit (Product Hunt allows a complexity budget per 15 minutes; when it is spent, calls are refused until reset_in_s). ${REDACTION_NOTE} ${UNTRUSTED}`;

const NOTES = [
  REDACTION_NOTE,
  "Product Hunt apps are read-only by default; this namespace only reads. Check Product Hunt's API terms before commercial use.",
];

export const productHuntNamespace = defineNamespace({
  name: 'producthunt',
  title: 'Product Hunt: launches, leaderboard, comments, topics, collections, users',
  version: '0.1.0',
  instructions: INSTRUCTIONS,
  settings: productHuntSettings,
  errorCodes: UPSTREAM_ERROR_CODES,
  create(env, { log, now = Date.now }: ProductHuntDependencies) {
    const settings = loadProductHuntSettings(env);
    const ready = () => requireReady(settings.readiness, 'producthunt');
    return deferredParts({
      name: 'producthunt',
      // The client is used only in handlers, and the listing's handlers never run.
      listing: async () =>
        (await import('./tools.ts')).productHuntTools({
          client: undefined as unknown as ProductHuntToolDeps['client'],
          ready,
          now,
        }),
      // The GraphQL client loads on the first call; capabilities too, for its rate-limit reading.
      load: async () => {
        const [{ ProductHuntClient }, { productHuntTools }] = await Promise.all([
          import('./client.ts'),
          import('./tools.ts'),
        ]);
        const client = new ProductHuntClient(settings, log, now);
        return {
          tools: productHuntTools({ client, ready, now }),
          capabilities: async () =>
            upstreamCapabilities(
              settings.readiness,
              {
                api_url: settings.apiUrl,
                token_url: settings.tokenUrl,
                timeout_ms: settings.timeoutMs,
                auth_mode: settings.auth?.kind ?? null,
                rate_limit: client.rateLimit(),
              },
              NOTES,
            ),
          close: async () => {},
        };
      },
    });
  },
});
