import { z } from 'zod';
import { envSetting } from '../../mcp/namespace-contract.ts';
import { baseUrl } from '../../upstream/namespace-kit.ts';
import { registerSecret } from '../../upstream/redact.ts';

/**
 * The namespace's settings, read once at start. A missing credential leaves its provider off;
 * a malformed setting is refused by the contract (SETTINGS_INVALID, naming it) before this is
 * built, so every base URL here is an http(s) URL.
 */
export interface SkillsSettings {
  githubApiUrl: string;
  githubRawUrl: string;
  githubToken: string | null;
  /** No default: the registry is consulted only when an operator names one (e.g. https://skills.sh). */
  registryUrl: string | null;
  registryApiKey: string | null;
  openaiBaseUrl: string;
  openaiApiKey: string | null;
  agentModel: string;
  firecrawlApiUrl: string;
  firecrawlApiKey: string | null;
}

export const SKILLS_SETTING_NAMES = [
  'GITHUB_API_URL',
  'GITHUB_RAW_URL',
  'GITHUB_TOKEN',
  'SKILLS_REGISTRY_URL',
  'SKILLS_REGISTRY_API_KEY',
  'OPENAI_BASE_URL',
  'OPENAI_API_KEY',
  'SKILLS_AGENT_MODEL',
  'FIRECRAWL_API_URL',
  'FIRECRAWL_API_KEY',
] as const;

/**
 * The settings as the namespace contract parses them: a malformed one is refused naming it
 * (SETTINGS_INVALID); this is the only place those rules are written.
 */
export const skillsSettings = z.object({
  GITHUB_API_URL: envSetting.url().optional(),
  GITHUB_RAW_URL: envSetting.url().optional(),
  GITHUB_TOKEN: envSetting.text().optional(),
  SKILLS_REGISTRY_URL: envSetting.url().optional(),
  SKILLS_REGISTRY_API_KEY: envSetting.text().optional(),
  OPENAI_BASE_URL: envSetting.url().optional(),
  OPENAI_API_KEY: envSetting.text().optional(),
  SKILLS_AGENT_MODEL: envSetting
    .text()
    .trim()
    .max(100, 'is not a model name (at most 100 characters)')
    .regex(/^\S+$/, 'is not a model name (no spaces)')
    .optional(),
  FIRECRAWL_API_URL: envSetting.url().optional(),
  FIRECRAWL_API_KEY: envSetting.text().optional(),
}) satisfies z.ZodType<Partial<Record<(typeof SKILLS_SETTING_NAMES)[number], string>>>;

/** The settings as the schema leaves them: each present one already checked for form. */
export type SkillsEnv = z.output<typeof skillsSettings>;

function secret(value: string | undefined): string | null {
  const trimmed = value?.trim();
  if (!trimmed) return null;
  registerSecret(trimmed);
  return trimmed;
}

/** Read once at start from the settings the contract parsed (skillsSettings checked each one's form). */
export function loadSkillsSettings(env: SkillsEnv): SkillsSettings {
  const registryUrl = baseUrl(env.SKILLS_REGISTRY_URL, '');
  return {
    githubApiUrl: baseUrl(env.GITHUB_API_URL, 'https://api.github.com'),
    githubRawUrl: baseUrl(env.GITHUB_RAW_URL, 'https://raw.githubusercontent.com'),
    githubToken: secret(env.GITHUB_TOKEN),
    registryUrl: registryUrl || null,
    registryApiKey: secret(env.SKILLS_REGISTRY_API_KEY),
    openaiBaseUrl: baseUrl(env.OPENAI_BASE_URL, 'https://api.openai.com/v1'),
    openaiApiKey: secret(env.OPENAI_API_KEY),
    agentModel: env.SKILLS_AGENT_MODEL || 'gpt-4o-mini',
    firecrawlApiUrl: baseUrl(env.FIRECRAWL_API_URL, 'https://api.firecrawl.dev'),
    firecrawlApiKey: secret(env.FIRECRAWL_API_KEY),
  };
}
