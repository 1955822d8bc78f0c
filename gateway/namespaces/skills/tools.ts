import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { ANNOTATIONS } from '../../upstream/namespace-kit.ts';
import { MAX_FILE_BYTES } from './content.ts';
import { CURATED_SKILLS } from './curated.ts';
import { UNTRUSTED_SKILLS } from './descriptions.ts';
import { findResult, MAX_INSPECTIONS, MAX_REQUIREMENTS, MAX_STEPS, type SkillFinder } from './finder.ts';
import type { GitHubClient } from './github.ts';
import { resolveSkill } from './resolve.ts';
import type { SkillSearch } from './search.ts';
import { PROVIDERS, searchHit } from './search-hit.ts';
import type { SkillsSettings } from './settings.ts';
import { lintSkillMarkdown } from './skill-md.ts';
import { createFileTools } from './tools-files.ts';
import { WEB_URLS_CHECKED } from './web.ts';

export interface SkillsToolsOptions {
  settings: SkillsSettings;
  github: GitHubClient | null;
  search: SkillSearch;
  finder: SkillFinder;
}

const SKILL_MD_MAX = 64 * 1024;

const provider = z.object({
  name: z.string(),
  ready: z.boolean(),
  authenticated: z.boolean(),
  base_url: z.string().nullable(),
  used_by: z.array(z.string()),
  note: z.string(),
});

function requireGitHub(github: GitHubClient | null): GitHubClient {
  if (github) return github;
  throw new UpstreamError(
    'NOT_CONFIGURED',
    'GitHub is not usable: GITHUB_API_URL or GITHUB_RAW_URL is not an http(s) URL. Fix it and restart; skills_capabilities shows the problem.',
  );
}

export function createSkillsTools({
  settings,
  github,
  search,
  finder,
}: SkillsToolsOptions): ToolDefinition[] {
  const fileTools = createFileTools(() => requireGitHub(github));
  const tools: ToolDefinition[] = [
    defineTool({
      name: 'skills_capabilities',
      title: 'Skills namespace capabilities',
      description:
        'Which providers are configured (GitHub with or without a token, skills registry, OpenAI for skills_find ranking), the caps every tool applies, and any setting problem. No network call; never returns a secret.',
      input: z.object({}),
      output: z.object({
        ready: z.boolean(),
        providers: z.array(provider),
        problems: z.array(z.string()),
        caps: z.record(z.string(), z.number()),
        curated_skills: z.number().int(),
        tools: z.array(z.object({ name: z.string(), title: z.string(), read_only: z.boolean() })),
        untrusted: z.string(),
      }),
      annotations: ANNOTATIONS.local,
      async handler() {
        return {
          ready: github !== null,
          providers: [
            {
              name: 'github',
              ready: github !== null,
              authenticated: settings.githubToken !== null,
              base_url: settings.githubApiUrl,
              used_by: [
                'skills_get',
                'skills_read_file',
                'skills_download',
                'skills_validate',
                'skills_search',
              ],
              note: settings.githubToken
                ? 'Token set: 5,000 API calls per hour and code search for SKILL.md.'
                : 'No GITHUB_TOKEN: 60 API calls per hour per IP and no code search; files still readable.',
            },
            {
              name: 'registry',
              ready: settings.registryUrl !== null,
              authenticated: settings.registryApiKey !== null,
              base_url: settings.registryUrl,
              used_by: ['skills_search', 'skills_find'],
              note: settings.registryUrl
                ? 'Searched as one source of skills_search.'
                : 'Off: set SKILLS_REGISTRY_URL (e.g. https://skills.sh).',
            },
            {
              name: 'curated',
              ready: true,
              authenticated: false,
              base_url: null,
              used_by: ['skills_search', 'skills_find'],
              note: `${CURATED_SKILLS.length} well-known skills, no network needed.`,
            },
            {
              name: 'openai',
              ready: finder.modelConfigured,
              authenticated: settings.openaiApiKey !== null,
              base_url: settings.openaiBaseUrl,
              used_by: ['skills_find'],
              note: finder.modelConfigured
                ? `Model ${settings.agentModel} ranks real candidates (at most ${MAX_STEPS} turns, ${MAX_INSPECTIONS} file reads per requirement).`
                : 'Off: set OPENAI_API_KEY; skills_find answers search-only meanwhile.',
            },
            {
              name: 'firecrawl',
              ready:
                settings.firecrawlApiKey !== null && settings.firecrawlApiUrl !== null && github !== null,
              authenticated: settings.firecrawlApiKey !== null,
              base_url: settings.firecrawlApiUrl,
              used_by: ['skills_search', 'skills_find'],
              note:
                settings.firecrawlApiKey !== null
                  ? `Web search (source "web"): at most ${WEB_URLS_CHECKED} GitHub pages per search are resolved, and only real SKILL.md folders at a commit are returned.`
                  : 'Off: set FIRECRAWL_API_KEY to add web search (source "web"); results are verified on GitHub before use.',
            },
          ],
          problems: settings.problems,
          caps: {
            search_results_max: 20,
            find_requirements_max: MAX_REQUIREMENTS,
            find_model_steps_max: MAX_STEPS,
            download_files_max: 100,
            download_bytes_max: 2 * 1024 * 1024,
            file_bytes_max: MAX_FILE_BYTES,
            skill_md_bytes_max: SKILL_MD_MAX,
          },
          curated_skills: CURATED_SKILLS.length,
          tools: tools.map((tool) => ({
            name: tool.name,
            title: tool.title,
            read_only: tool.annotations.readOnlyHint === true,
          })),
          untrusted: UNTRUSTED_SKILLS,
        };
      },
    }),

    defineTool({
      name: 'skills_search',
      title: 'Search for skills',
      description: `Deterministic search across the configured sources: the skills registry (SKILLS_REGISTRY_URL), GitHub code search for SKILL.md (needs GITHUB_TOKEN) a curated index that always works, and web search via Firecrawl (FIRECRAWL_API_KEY) whose pages count only once they resolve to a real SKILL.md folder on GitHub. Results are merged by owner/repo/name and ranked; each has its source (owner, repo, path, ref), licence when known, and the exact skills_get arguments. ${UNTRUSTED_SKILLS}`,
      input: z.object({
        query: z.string().trim().min(1).max(200).describe('What the skill should do, e.g. "fill pdf forms".'),
        limit: z.number().int().min(1).max(20).default(8),
        sources: z
          .array(z.enum(PROVIDERS))
          .min(1)
          .max(4)
          .optional()
          .describe('Subset of registry, github, curated, web (default: all configured).'),
      }),
      output: z.object({
        query: z.string(),
        results: z.array(searchHit),
        providers_used: z.array(z.enum(PROVIDERS)),
        providers_skipped: z.array(z.object({ provider: z.enum(PROVIDERS), reason: z.string() })),
        problems: z.array(z.string()),
        untrusted: z.string(),
      }),
      annotations: ANNOTATIONS.read,
      async handler({ query, limit, sources }, { signal }) {
        const outcome = await search.search(
          query,
          limit,
          sources ? [...new Set(sources)] : PROVIDERS,
          signal,
        );
        return { query, ...outcome, untrusted: UNTRUSTED_SKILLS };
      },
    }),

    ...fileTools,

    defineTool({
      name: 'skills_validate',
      title: 'Validate a SKILL.md',
      description:
        'Lints a SKILL.md against the Agent Skills rules: frontmatter present and valid YAML, name format (lowercase, digits, single hyphens, ≤64) and equal to its folder, description 1–1024 characters, compatibility ≤500, metadata a string map, only known keys; plus body-size advice. Give skill_md text (no network) or a source (read from GitHub at a pinned commit).',
      input: z
        .object({
          skill_md: z.string().max(SKILL_MD_MAX).optional().describe('The SKILL.md text.'),
          folder_name: z
            .string()
            .max(100)
            .optional()
            .describe('With skill_md: the folder it will live in, to check name against it.'),
          source: z
            .string()
            .min(1)
            .max(600)
            .optional()
            .describe('Instead of skill_md: a skill source as for skills_get.'),
          skill: z.string().max(64).optional(),
        })
        .refine(
          (args) => (args.skill_md === undefined) !== (args.source === undefined),
          'Give exactly one of skill_md or source.',
        ),
      output: z.object({
        valid: z.boolean(),
        name: z.string().nullable(),
        errors: z.array(
          z.object({
            level: z.string(),
            code: z.string(),
            field: z.string().nullable(),
            message: z.string(),
          }),
        ),
        warnings: z.array(
          z.object({
            level: z.string(),
            code: z.string(),
            field: z.string().nullable(),
            message: z.string(),
          }),
        ),
        body_lines: z.number().int(),
        checked: z.object({ source: z.string().nullable(), folder_name: z.string().nullable() }),
      }),
      annotations: { ...ANNOTATIONS.read, openWorldHint: true },
      async handler({ skill_md, folder_name, source, skill }, { signal }) {
        let text = skill_md ?? '';
        let folder = folder_name ?? null;
        let pinned: string | null = null;
        if (source !== undefined) {
          const gh = requireGitHub(github);
          const resolved = await resolveSkill(gh, source, skill, signal);
          const entry = resolved.files[0];
          if (!entry || (entry.size ?? 0) > SKILL_MD_MAX) {
            throw new UpstreamError(
              'INVALID_ARGUMENT',
              `SKILL.md is over ${SKILL_MD_MAX} bytes; that alone breaks the size advice.`,
            );
          }
          const path = resolved.folder ? `${resolved.folder}/SKILL.md` : 'SKILL.md';
          text = (
            await gh.raw(resolved.owner, resolved.repo, resolved.commit.sha, path, entry.sha, signal)
          ).toString('utf8');
          folder = resolved.folder === '' ? null : (resolved.folder.split('/').pop() ?? null);
          pinned = `${resolved.owner}/${resolved.repo}@${resolved.commit.sha}:${resolved.folder}`;
        }
        const lint = lintSkillMarkdown(text, folder);
        return {
          valid: lint.valid,
          name: lint.skill.name,
          errors: lint.errors,
          warnings: lint.warnings,
          body_lines: lint.body_lines,
          checked: { source: pinned, folder_name: folder },
        };
      },
    }),

    defineTool({
      name: 'skills_find',
      title: 'Find skills for one or more needs',
      description: `For each requirement (at most ${MAX_REQUIREMENTS}) runs skills_search; when OPENAI_API_KEY is set, a model ranks and explains among those real candidates (bounded turns and tokens). It never writes skill content: results are search hits with optional model_reason, and best gives skills_get arguments. Without a key the answer is search-only and says so in problems. ${UNTRUSTED_SKILLS}`,
      input: z.object({
        requirement: z.string().trim().min(1).max(300).optional(),
        requirements: z.array(z.string().trim().max(300)).max(MAX_REQUIREMENTS).optional(),
      }),
      output: z.object({ results: z.array(findResult), untrusted: z.string() }),
      annotations: ANNOTATIONS.read,
      async handler({ requirement, requirements }, { signal }) {
        const all = [
          ...new Set([requirement ?? '', ...(requirements ?? [])].map((r) => r.trim()).filter(Boolean)),
        ];
        if (all.length === 0) {
          throw new UpstreamError(
            'INVALID_ARGUMENT',
            'Give requirement or requirements: what each skill should do.',
          );
        }
        if (all.length > MAX_REQUIREMENTS) {
          throw new UpstreamError(
            'INVALID_ARGUMENT',
            `At most ${MAX_REQUIREMENTS} requirements per call (got ${all.length}); split them over several calls.`,
          );
        }
        const results = [];
        // One requirement at a time: bounded spend per call, and the calls share GitHub's limits.
        for (const item of all) results.push(await finder.findOne(item, signal));
        return { results, untrusted: UNTRUSTED_SKILLS };
      },
    }),
  ];
  return tools;
}
