import type { Logger } from 'pino';
import { z } from 'zod';
import { UpstreamError } from '../../upstream/errors.ts';
import { createUpstreamHttp, type UpstreamHttp } from '../../upstream/http.ts';
import { searchCurated } from './curated.ts';
import type { GitHubClient } from './github.ts';
import type { Provider, SearchHit } from './search-hit.ts';
import type { SkillsSettings } from './settings.ts';
import { lintSkillMarkdown } from './skill-md.ts';
import { formatSource, isCommitSha } from './source.ts';
import { WebCandidates } from './web.ts';

export interface SearchOutcome {
  results: SearchHit[];
  providers_used: Provider[];
  providers_skipped: Array<{ provider: Provider; reason: string }>;
  problems: string[];
}

const registryAnswer = z.object({
  skills: z.array(
    z.object({
      skillId: z.string().min(1).max(100).optional(),
      name: z.string().min(1).max(200),
      source: z.string().regex(/^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/),
      installs: z.number().nonnegative().optional(),
      description: z.string().max(2000).nullable().optional(),
    }),
  ),
});

function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

/** Same scale for every provider: how many query words the name (×3) and description (×1) contain. */
function textScore(query: string, name: string, description: string | null): number {
  const terms = words(query);
  if (terms.length === 0) return 0;
  const nameWords = new Set(words(name));
  const descriptionWords = new Set(words(description ?? ''));
  let score = 0;
  for (const term of terms) {
    if (nameWords.has(term)) score += 3;
    else if (term.length >= 3 && name.toLowerCase().includes(term)) score += 2;
    if (descriptionWords.has(term)) score += 1;
  }
  return score / terms.length;
}

function keyOf(owner: string, repo: string, name: string): string {
  return `${owner}/${repo}/${name}`.toLowerCase();
}

export class SkillSearch {
  private readonly registryHttp: UpstreamHttp;
  private readonly web: WebCandidates | null;

  constructor(
    private readonly settings: SkillsSettings,
    private readonly github: GitHubClient | null,
    log: Logger,
    fetchImpl?: typeof fetch,
  ) {
    this.registryHttp = createUpstreamHttp({
      service: 'Skills registry',
      log,
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    });
    const { firecrawlApiUrl, firecrawlApiKey } = settings;
    this.web =
      firecrawlApiUrl && firecrawlApiKey && github
        ? new WebCandidates(firecrawlApiUrl, firecrawlApiKey, github, log)
        : null;
  }

  skipReason(provider: Provider): string | null {
    if (provider === 'registry' && !this.settings.registryUrl) return 'SKILLS_REGISTRY_URL is not set';
    if (provider === 'github' && !this.github) return 'GITHUB_API_URL is not usable';
    if (provider === 'github' && !this.settings.githubToken) return 'GitHub code search needs GITHUB_TOKEN';
    if (provider === 'web' && !this.web) {
      return this.github ? 'FIRECRAWL_API_KEY is not set' : 'web results need GitHub to verify them';
    }
    return null;
  }

  private async registry(query: string, limit: number, signal: AbortSignal): Promise<SearchHit[]> {
    const key = this.settings.registryApiKey;
    const url = `${this.settings.registryUrl}/api/search?q=${encodeURIComponent(query)}&limit=${limit}`;
    const response = await this.registryHttp.request({
      method: 'GET',
      url,
      route: 'GET /api/search',
      signal,
      idempotent: true,
      timeoutMs: 15_000,
      maxResponseBytes: 1024 * 1024,
      ...(key ? { authorize: async () => `Bearer ${key}` } : {}),
    });
    const parsed = registryAnswer.safeParse(response.json());
    if (!parsed.success) {
      throw new UpstreamError(
        'UPSTREAM_ERROR',
        'The skills registry answered in an unexpected shape (expected {skills:[{name, source:"owner/repo", skillId?, installs?}]}); its results were skipped. Check SKILLS_REGISTRY_URL.',
      );
    }
    return parsed.data.skills.slice(0, limit).map((item) => {
      const [owner = '', repo = ''] = item.source.split('/');
      const name = item.skillId ?? item.name;
      return {
        name,
        description: item.description ?? null,
        source: { owner, repo, path: null, ref: null },
        get: { source: `${owner}/${repo}`, skill: name },
        url: `https://github.com/${owner}/${repo}`,
        license: null,
        installs: item.installs ?? null,
        repository_description: null,
        found_by: ['registry' as const],
        score: 0,
      };
    });
  }

  private async githubSearch(query: string, limit: number, signal: AbortSignal): Promise<SearchHit[]> {
    const github = this.github as GitHubClient;
    const hits = await github.searchCode(query, limit, signal);
    // Code search names files, not skills: read each SKILL.md (raw host, checked against its
    // blob SHA; no API quota) so hits carry the author's real description.
    const descriptions = await Promise.all(
      hits.map(async (hit, i) => {
        // The first ten only: enough for a ranked page, bounded fan-out per search.
        if (i >= 10 || !hit.ref || !isCommitSha(hit.ref) || !hit.blobSha) return null;
        try {
          const path = hit.path ? `${hit.path}/SKILL.md` : 'SKILL.md';
          const bytes = await github.raw(hit.owner, hit.repo, hit.ref, path, hit.blobSha, signal);
          return lintSkillMarkdown(bytes.subarray(0, 64 * 1024).toString('utf8')).skill.description;
        } catch (error) {
          if (signal.aborted) throw error;
          return null;
        }
      }),
    );
    return hits.map((hit, i) => {
      const name = hit.path.split('/').pop() || hit.repo;
      return {
        name,
        description: descriptions[i] ?? null,
        source: { owner: hit.owner, repo: hit.repo, path: hit.path, ref: hit.ref },
        get: {
          source: hit.ref
            ? formatSource(hit.owner, hit.repo, hit.ref, hit.path)
            : `${hit.owner}/${hit.repo}/${hit.path}`,
        },
        url: `https://github.com/${hit.owner}/${hit.repo}/tree/${hit.ref ?? 'HEAD'}/${hit.path}`,
        license: null,
        installs: null,
        repository_description: hit.repoDescription,
        found_by: ['github' as const],
        score: 0,
      };
    });
  }

  private async webSearch(query: string, signal: AbortSignal, problems: string[]): Promise<SearchHit[]> {
    const { hits, skipped } = await (this.web as WebCandidates).search(query, signal);
    if (skipped > 0) {
      problems.push(
        `web: ${skipped} page(s) were not a GitHub folder with a readable SKILL.md and were left out`,
      );
    }
    return hits;
  }

  private curated(query: string, limit: number): SearchHit[] {
    return searchCurated(query, limit).map(({ skill }) => ({
      name: skill.name,
      description: skill.description,
      source: { owner: skill.owner, repo: skill.repo, path: skill.path, ref: skill.ref },
      get: { source: formatSource(skill.owner, skill.repo, skill.ref, skill.path) },
      url: `https://github.com/${skill.owner}/${skill.repo}/tree/${skill.ref}/${skill.path}`,
      license: skill.license,
      installs: null,
      repository_description: null,
      found_by: ['curated' as const],
      score: 0,
    }));
  }

  /**
   * Asks every requested, configured provider at once; one failing provider becomes a problem,
   * not a failed search. Results are merged by owner/repo/name, richer fields kept, and ranked
   * by text match, then by how many providers agree, then by installs.
   */
  async search(
    query: string,
    limit: number,
    providers: readonly Provider[],
    signal: AbortSignal,
  ): Promise<SearchOutcome> {
    const used: Provider[] = [];
    const skipped: SearchOutcome['providers_skipped'] = [];
    const problems: string[] = [];
    const jobs: Array<Promise<SearchHit[]>> = [];
    for (const provider of providers) {
      const reason = this.skipReason(provider);
      if (reason) {
        skipped.push({ provider, reason });
        continue;
      }
      used.push(provider);
      const job =
        provider === 'registry'
          ? this.registry(query, limit * 2, signal)
          : provider === 'github'
            ? this.githubSearch(query, limit * 2, signal)
            : provider === 'web'
              ? this.webSearch(query, signal, problems)
              : Promise.resolve(this.curated(query, limit * 2));
      jobs.push(
        job.catch((error: unknown) => {
          if (signal.aborted) throw error;
          problems.push(`${provider}: ${(error as Error).message}`);
          return [];
        }),
      );
    }
    const merged = new Map<string, SearchHit>();
    for (const hits of await Promise.all(jobs)) {
      for (const hit of hits) {
        const key = keyOf(hit.source.owner, hit.source.repo, hit.name);
        const seen = merged.get(key);
        if (!seen) {
          merged.set(key, { ...hit, found_by: [...hit.found_by] });
          continue;
        }
        seen.found_by = [...new Set([...seen.found_by, ...hit.found_by])];
        seen.description ??= hit.description;
        seen.license ??= hit.license;
        seen.installs ??= hit.installs;
        seen.repository_description ??= hit.repository_description;
        // A located folder beats a registry pointer that needs skill=<name> to be found.
        if (seen.source.path === null && hit.source.path !== null) {
          seen.source = hit.source;
          seen.get = hit.get;
          seen.url = hit.url;
        }
      }
    }
    const results = [...merged.values()].map((hit) => ({
      ...hit,
      score:
        Math.round(
          (textScore(query, hit.name, hit.description ?? hit.repository_description) +
            0.5 * (hit.found_by.length - 1) +
            0.3 * Math.log10((hit.installs ?? 0) + 1)) *
            1000,
        ) / 1000,
    }));
    results.sort(
      (a, b) =>
        b.score - a.score ||
        keyOf(a.source.owner, a.source.repo, a.name).localeCompare(
          keyOf(b.source.owner, b.source.repo, b.name),
        ),
    );
    return { results: results.slice(0, limit), providers_used: used, providers_skipped: skipped, problems };
  }
}
