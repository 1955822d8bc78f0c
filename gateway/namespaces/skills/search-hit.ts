/**
 * One skill found by search, as every provider reports it: the shape that skills_search
 * answers with and that each provider (the web one in web.ts too) fills. Its own file, below
 * the search and its providers, so a provider never imports the search that calls it.
 */
import { z } from 'zod';

export const PROVIDERS = ['registry', 'github', 'curated', 'web'] as const;
export type Provider = (typeof PROVIDERS)[number];

export const searchHit = z.object({
  name: z.string().describe('Skill name (folder name, or the registry’s id).'),
  description: z.string().nullable().describe('Untrusted: written by the skill’s author or the index.'),
  source: z.object({
    owner: z.string(),
    repo: z.string(),
    path: z.string().nullable(),
    ref: z.string().nullable(),
  }),
  get: z
    .object({ source: z.string(), skill: z.string().optional() })
    .describe('Arguments for skills_get / skills_download that fetch exactly this skill.'),
  url: z.string(),
  license: z.string().nullable(),
  installs: z
    .number()
    .nullable()
    .describe('Install count reported by the registry, when it is one of the sources.'),
  repository_description: z.string().nullable(),
  found_by: z.array(z.enum(PROVIDERS)),
  score: z.number(),
});
export type SearchHit = z.output<typeof searchHit>;
