import { z } from 'zod';
import { envSetting } from '../../mcp/namespace-contract.ts';
import { baseUrlSetting } from '../../upstream/namespace-kit.ts';
import { registerSecret } from '../../upstream/redact.ts';

/**
 * The namespace's settings, read once at start. Nothing here stops the gateway: a missing
 * credential leaves its provider off, and a base URL that is not http(s) turns that provider
 * off with a problem naming the setting (the rule every upstream namespace follows).
 */
export interface SkillsSettings {
  githubApiUrl: string | null;
  githubRawUrl: string | null;
  githubToken: string | null;
  /** No default: the registry is consulted only when an operator names one (e.g. https://skills.sh). */
  registryUrl: string | null;
  registryApiKey: string | null;
  openaiBaseUrl: string | null;
  openaiApiKey: string | null;
  agentModel: string;
  firecrawlApiUrl: string | null;
  firecrawlApiKey: string | null;
  problems: string[];
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

/** The settings as the namespace contract parses them: a malformed one is refused naming it. */
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

function secret(env: Readonly<Record<string, string | undefined>>, name: string): string | null {
  const value = env[name]?.trim();
  if (!value) return null;
  registerSecret(value);
  return value;
}

export function loadSkillsSettings(env: Readonly<Record<string, string | undefined>>): SkillsSettings {
  const problems: string[] = [];
  const registryRaw = env.SKILLS_REGISTRY_URL?.trim();
  const model = env.SKILLS_AGENT_MODEL?.trim() || 'gpt-4o-mini';
  if (model.length > 100 || /\s/.test(model)) problems.push('SKILLS_AGENT_MODEL is not a model name');
  return {
    githubApiUrl: baseUrlSetting(env, 'GITHUB_API_URL', 'https://api.github.com', problems),
    githubRawUrl: baseUrlSetting(env, 'GITHUB_RAW_URL', 'https://raw.githubusercontent.com', problems),
    githubToken: secret(env, 'GITHUB_TOKEN'),
    registryUrl: registryRaw ? baseUrlSetting(env, 'SKILLS_REGISTRY_URL', '', problems) : null,
    registryApiKey: secret(env, 'SKILLS_REGISTRY_API_KEY'),
    openaiBaseUrl: baseUrlSetting(env, 'OPENAI_BASE_URL', 'https://api.openai.com/v1', problems),
    openaiApiKey: secret(env, 'OPENAI_API_KEY'),
    agentModel: model.slice(0, 100),
    firecrawlApiUrl: baseUrlSetting(env, 'FIRECRAWL_API_URL', 'https://api.firecrawl.dev', problems),
    firecrawlApiKey: secret(env, 'FIRECRAWL_API_KEY'),
    problems,
  };
}
