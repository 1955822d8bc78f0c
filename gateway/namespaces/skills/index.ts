import type { Logger } from 'pino';
import { defineNamespace } from '../../mcp/namespace-contract.ts';
import { UPSTREAM_ERROR_CODES } from '../../upstream/namespace-kit.ts';
import { skillsCapabilities } from './capabilities.ts';
import { NAMESPACE_INSTRUCTIONS } from './descriptions.ts';
import { SkillFinder } from './finder.ts';
import { GitHubClient } from './github.ts';
import { ChatClient } from './openai.ts';
import { SkillSearch } from './search.ts';
import { loadSkillsSettings, skillsSettings } from './settings.ts';
import { createSkillsTools } from './tools.ts';

/** What the skills namespace uses of what the registry hands every namespace. */
export interface SkillsDependencies {
  log: Logger;
}

/** Mounts whatever is configured: with nothing set, GitHub is read anonymously and search uses the curated index. */
export const skillsNamespace = defineNamespace({
  name: 'skills',
  title: 'Agent Skills: find, inspect and fetch with provenance',
  version: '0.1.0',
  instructions: NAMESPACE_INSTRUCTIONS,
  settings: skillsSettings,
  errorCodes: UPSTREAM_ERROR_CODES,
  create(env, { log }: SkillsDependencies) {
    const settings = loadSkillsSettings(env);
    const github = new GitHubClient({
      apiUrl: settings.githubApiUrl,
      rawUrl: settings.githubRawUrl,
      token: settings.githubToken,
      log,
      maxFileBytes: 1024 * 1024,
    });
    const search = new SkillSearch(settings, github, log);
    const chat = settings.openaiApiKey
      ? new ChatClient({
          baseUrl: settings.openaiBaseUrl,
          apiKey: settings.openaiApiKey,
          model: settings.agentModel,
          log,
        })
      : null;
    const finder = new SkillFinder(search, github, chat);
    return {
      tools: createSkillsTools({ settings, github, search, finder }),
      capabilities: async () => skillsCapabilities(settings, github, finder),
      close: async () => {},
    };
  },
});
