import type { Logger } from 'pino';
import type { NamespaceDefinition } from '../../mcp/model.ts';
import type { ToolDefinition } from '../../mcp/tool.ts';
import { capabilitiesTool, requireReady } from '../../upstream/namespace-kit.ts';
import { ProductHuntClient } from './client.ts';
import { loadProductHuntSettings } from './settings.ts';
import { REDACTION_NOTE, UNTRUSTED } from './shape.ts';
import { otherTools } from './tools-more.ts';
import { postTools } from './tools-posts.ts';

export interface ProductHuntOptions {
  env: Readonly<Record<string, string | undefined>>;
  log: Logger;
  now?: () => number;
}

const INSTRUCTIONS = `Read Product Hunt (API v2): launches, the daily leaderboard (Pacific-time days), posts, comments, topics, collections and users. Read-only. Call producthunt_capabilities first when a tool fails. Every result carries rate_limit (Product Hunt allows a complexity budget per 15 minutes; when it is spent, calls are refused until reset_in_s). ${REDACTION_NOTE} ${UNTRUSTED}`;

export function createProductHuntNamespace({
  env,
  log,
  now = Date.now,
}: ProductHuntOptions): NamespaceDefinition {
  const settings = loadProductHuntSettings(env);
  const client = new ProductHuntClient(settings, log, now);
  const deps = { client, ready: () => requireReady(settings.readiness, 'producthunt'), now };
  const tools: ToolDefinition[] = [];
  tools.push(
    capabilitiesTool({
      namespace: 'producthunt',
      title: 'Product Hunt namespace capabilities',
      readiness: settings.readiness,
      settings: () => ({
        api_url: settings.apiUrl,
        token_url: settings.tokenUrl,
        timeout_ms: settings.timeoutMs,
        auth_mode: settings.auth?.kind ?? null,
        rate_limit: client.rateLimit(),
      }),
      notes: [
        REDACTION_NOTE,
        "Product Hunt apps are read-only by default; this namespace only reads. Check Product Hunt's API terms before commercial use.",
      ],
      tools: () => tools,
    }),
    ...postTools(deps),
    ...otherTools(deps),
  );
  return {
    name: 'producthunt',
    title: 'Product Hunt: launches, leaderboard, comments, topics, collections, users',
    version: '0.1.0',
    instructions: INSTRUCTIONS,
    tools,
  };
}
