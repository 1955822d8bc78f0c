/**
 * Skills registry contract server, shaped like skills.sh's search endpoint:
 * GET /api/search?q=…&limit=… → {query, searchType, skills:[{id, skillId, name, installs, source}], count}.
 * A wrong bearer key is refused (401); a query of "brokenshape" answers a different shape, as a
 * registry that changed its API would.
 */
import { type LoopbackServer, sendJson, startLoopback } from './loopback.ts';

export interface RegistrySkill {
  skillId: string;
  name: string;
  installs: number;
  source: string;
}

export async function startRegistryContract(
  skills: RegistrySkill[],
  apiKey: string | null,
): Promise<LoopbackServer> {
  return startLoopback((req, res) => {
    const url = new URL(req.path, 'http://x');
    if (url.pathname !== '/api/search') {
      sendJson(res, 404, { error: 'not found' });
      return;
    }
    if (apiKey !== null && req.headers.authorization !== `Bearer ${apiKey}`) {
      sendJson(res, 401, { error: 'unauthorized' });
      return;
    }
    const q = (url.searchParams.get('q') ?? '').toLowerCase();
    if (q.length < 2) {
      sendJson(res, 400, { error: 'query must be at least 2 characters' });
      return;
    }
    if (q === 'brokenshape') {
      sendJson(res, 200, { data: [{ title: 'x' }] });
      return;
    }
    const limit = Math.min(100, Number(url.searchParams.get('limit') ?? 20));
    const terms = q.split(/\s+/);
    const hits = skills
      .filter((skill) => terms.some((term) => skill.name.includes(term) || skill.skillId.includes(term)))
      .slice(0, limit)
      .map((skill) => ({ id: `${skill.source}/${skill.skillId}`, ...skill }));
    sendJson(res, 200, { query: q, searchType: 'fuzzy', skills: hits, count: hits.length });
  });
}
