import type { Logger } from 'pino';
import { z } from 'zod';
import { UpstreamError } from '../../upstream/errors.ts';
import { createUpstreamHttp, type UpstreamHttp } from '../../upstream/http.ts';
import type { GitHubClient } from './github.ts';
import { resolveSkill } from './resolve.ts';
import type { SearchHit } from './search-hit.ts';
import { lintSkillMarkdown } from './skill-md.ts';
import { formatSource, parseSource } from './source.ts';

/**
 * The web as a source of candidates, through Firecrawl search — but only as pointers. A page
 * URL becomes a result only after it parses as a GitHub source (hosts compared exactly) and
 * skills_get's own resolution finds a real SKILL.md at a commit; page titles and snippets are
 * never returned. This is the origin's web path without its unverified text.
 */
export const WEB_URLS_CHECKED = 5;

const searchAnswer = z.object({
  data: z.object({ web: z.array(z.object({ url: z.string() }).passthrough()).default([]) }),
});

export class WebCandidates {
  private readonly http: UpstreamHttp;

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
    private readonly github: GitHubClient,
    log: Logger,
  ) {
    this.http = createUpstreamHttp({
      service: 'Firecrawl',
      log,
      // Firecrawl answers 402 when the account's credits are spent.
      describeError: (status, body) =>
        status === 402
          ? {
              code: 'QUOTA_EXCEEDED',
              detail: body.slice(0, 200),
              advice: 'Firecrawl credits are spent; other sources still answer.',
            }
          : {},
    });
  }

  async search(query: string, signal: AbortSignal): Promise<{ hits: SearchHit[]; skipped: number }> {
    const { apiKey } = this;
    const response = await this.http.request({
      method: 'POST',
      url: `${this.baseUrl}/v2/search`,
      route: 'POST /v2/search',
      signal,
      // A search changes nothing; repeating it costs credits only.
      idempotent: true,
      timeoutMs: 20_000,
      maxResponseBytes: 1024 * 1024,
      json: { query: `${query} SKILL.md site:github.com`, limit: 10, sources: ['web'] },
      authorize: async () => `Bearer ${apiKey}`,
    });
    const parsed = searchAnswer.safeParse(response.json());
    if (!parsed.success) {
      throw new UpstreamError(
        'UPSTREAM_ERROR',
        'Firecrawl answered in an unexpected shape (expected data.web[].url); web results were skipped.',
      );
    }
    const urls = [...new Set(parsed.data.data.web.map((item) => item.url))];
    const sources = urls.filter((url) => {
      try {
        parseSource(url);
        return true;
      } catch {
        return false;
      }
    });
    const hits: SearchHit[] = [];
    let skipped = urls.length - sources.length;
    for (const url of sources.slice(0, WEB_URLS_CHECKED)) {
      try {
        const skill = await resolveSkill(this.github, url, undefined, signal);
        const entry = skill.files[0];
        if (!entry || (entry.size ?? 0) > 256 * 1024) throw new Error('SKILL.md too large');
        const path = skill.folder ? `${skill.folder}/SKILL.md` : 'SKILL.md';
        const text = await this.github.raw(
          skill.owner,
          skill.repo,
          skill.commit.sha,
          path,
          entry.sha,
          signal,
        );
        const lint = lintSkillMarkdown(text.toString('utf8'));
        const name = skill.folder.split('/').pop() || skill.repo;
        hits.push({
          name,
          description: lint.skill.description,
          source: { owner: skill.owner, repo: skill.repo, path: skill.folder, ref: skill.commit.sha },
          get: { source: formatSource(skill.owner, skill.repo, skill.commit.sha, skill.folder) },
          url: `https://github.com/${skill.owner}/${skill.repo}/tree/${skill.commit.sha}${skill.folder ? `/${skill.folder}` : ''}`,
          license: lint.skill.license ?? skill.license,
          installs: null,
          repository_description: null,
          found_by: ['web'],
          score: 0,
        });
      } catch (error) {
        if (signal.aborted) throw error;
        skipped++;
      }
    }
    return { hits, skipped: skipped + Math.max(0, sources.length - WEB_URLS_CHECKED) };
  }
}
