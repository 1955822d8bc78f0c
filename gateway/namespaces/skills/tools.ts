import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { ANNOTATIONS } from '../../upstream/namespace-kit.ts';
import { UNTRUSTED_SKILLS } from './descriptions.ts';
import { findResult, MAX_REQUIREMENTS, type SkillFinder } from './finder.ts';
import type { GitHubClient } from './github.ts';
import { resolveSkill } from './resolve.ts';
import type { SkillSearch } from './search.ts';
import { PROVIDERS, searchHit } from './search-hit.ts';
import type { SkillsSettings } from './settings.ts';
import { lintSkillMarkdown } from './skill-md.ts';
import { createFileTools } from './tools-files.ts';

export interface SkillsToolsOptions {
  settings: SkillsSettings;
  github: GitHubClient | null;
  search: SkillSearch;
  finder: SkillFinder;
}

export const SKILL_MD_MAX = 64 * 1024;

function requireGitHub(github: GitHubClient | null): GitHubClient {
  if (github) return github;
  throw new UpstreamError(
    'NOT_CONFIGURED',
    'GitHub is not usable: GITHUB_API_URL or GITHUB_RAW_URL is not an http(s) URL. Fix it and restart; skills_capabilities shows the problem.',
  );
}

export function createSkillsTools(options: SkillsToolsOptions): ToolDefinition[] {
  return [
    searchTool(options),
    ...createFileTools(() => requireGitHub(options.github)),
    validateTool(options),
    findTool(options),
  ];
}

function searchTool({ search }: SkillsToolsOptions): ToolDefinition {
  return defineTool({
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
      const outcome = await search.search(query, limit, sources ? [...new Set(sources)] : PROVIDERS, signal);
      return { query, ...outcome, untrusted: UNTRUSTED_SKILLS };
    },
  });
}

const validateInput = z
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
  );

const validateOutput = z.object({
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
  untrusted: z
    .string()
    .nullable()
    .describe('With a source: the name and findings quote a SKILL.md written by a third party.'),
});

function validateTool({ github }: SkillsToolsOptions): ToolDefinition {
  return defineTool({
    name: 'skills_validate',
    title: 'Validate a SKILL.md',
    description:
      'Lints a SKILL.md against the Agent Skills rules: frontmatter present and valid YAML, name format (lowercase, digits, single hyphens, ≤64) and equal to its folder, description 1–1024 characters, compatibility ≤500, metadata a string map, only known keys; plus body-size advice. Give skill_md text (no network) or a source (read from GitHub at a pinned commit).',
    input: validateInput,
    output: validateOutput,
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
        // Findings quote the frontmatter (names, keys), which a stranger wrote when read from GitHub.
        untrusted: source === undefined ? null : UNTRUSTED_SKILLS,
      };
    },
  });
}

function findTool({ finder }: SkillsToolsOptions): ToolDefinition {
  return defineTool({
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
  });
}
