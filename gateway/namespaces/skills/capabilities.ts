/** What skills_capabilities reports: each provider, the caps every tool applies; no network call. */
import type { CapabilityReport } from '../../mcp/namespace-contract.ts';
import { MAX_FILE_BYTES } from './content.ts';
import { CURATED_SKILLS } from './curated.ts';
import { UNTRUSTED_SKILLS } from './descriptions.ts';
import { MAX_INSPECTIONS, MAX_REQUIREMENTS, MAX_STEPS, type SkillFinder } from './finder.ts';
import type { GitHubClient } from './github.ts';
import type { SkillsSettings } from './settings.ts';
import { SKILL_MD_MAX } from './tools.ts';
import { WEB_URLS_CHECKED } from './web.ts';

interface Provider {
  name: string;
  ready: boolean;
  authenticated: boolean;
  base_url: string | null;
  used_by: string[];
  note: string;
}

function providers(settings: SkillsSettings, github: GitHubClient | null, finder: SkillFinder): Provider[] {
  return [
    {
      name: 'github',
      ready: github !== null,
      authenticated: settings.githubToken !== null,
      base_url: settings.githubApiUrl,
      used_by: ['skills_get', 'skills_read_file', 'skills_download', 'skills_validate', 'skills_search'],
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
      ready: settings.firecrawlApiKey !== null && github !== null,
      authenticated: settings.firecrawlApiKey !== null,
      base_url: settings.firecrawlApiUrl,
      used_by: ['skills_search', 'skills_find'],
      note:
        settings.firecrawlApiKey !== null
          ? `Web search (source "web"): at most ${WEB_URLS_CHECKED} GitHub pages per search are resolved, and only real SKILL.md folders at a commit are returned.`
          : 'Off: set FIRECRAWL_API_KEY to add web search (source "web"); results are verified on GitHub before use.',
    },
  ];
}

export function skillsCapabilities(
  settings: SkillsSettings,
  github: GitHubClient | null,
  finder: SkillFinder,
): CapabilityReport {
  return {
    ready: github !== null,
    // Nothing is required: GitHub is read anonymously and search has the curated index.
    configured: true,
    authSource: settings.githubToken ? 'GITHUB_TOKEN' : null,
    settings: { agent_model: settings.agentModel },
    notes: [UNTRUSTED_SKILLS],
    details: {
      providers: providers(settings, github, finder),
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
      untrusted: UNTRUSTED_SKILLS,
    },
  };
}
