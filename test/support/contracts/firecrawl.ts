/**
 * Firecrawl contract server: POST /v2/search → {success, data:{web:[{url, title, description, position}]}}.
 * Refuses a missing or wrong bearer key (401) and a body without a string `query` (400); answers
 * the pages whose title shares a word with the query (the words SKILL.md and site: excluded).
 */
import { type LoopbackServer, sendJson, startLoopback } from './loopback.ts';

export interface WebPage {
  url: string;
  title: string;
  description: string;
}

export async function startFirecrawlContract(pages: WebPage[], apiKey: string): Promise<LoopbackServer> {
  return startLoopback((req, res) => {
    if (req.method !== 'POST' || req.path !== '/v2/search') {
      sendJson(res, 404, { success: false, error: 'Not found' });
      return;
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      sendJson(res, 401, { success: false, error: 'Unauthorized: Invalid token' });
      return;
    }
    let body: { query?: unknown; limit?: unknown };
    try {
      body = JSON.parse(req.body) as typeof body;
    } catch {
      sendJson(res, 400, { success: false, error: 'Invalid JSON' });
      return;
    }
    if (typeof body.query !== 'string' || body.query.length === 0) {
      sendJson(res, 400, { success: false, error: 'query: Required' });
      return;
    }
    const terms = body.query
      .toLowerCase()
      .split(/\s+/)
      .filter((term) => term !== 'skill.md' && !term.startsWith('site:'));
    const limit = typeof body.limit === 'number' ? body.limit : 5;
    const web = pages
      .filter((page) => terms.some((term) => page.title.toLowerCase().includes(term)))
      .slice(0, limit)
      .map((page, i) => ({ ...page, position: i + 1 }));
    sendJson(res, 200, { success: true, data: { web } });
  });
}
