import type { Logger } from 'pino';
import type { NamespaceDefinition } from '../../mcp/model.ts';
import { NAMESPACE_INSTRUCTIONS } from './descriptions.ts';
import { SkillFinder } from './finder.ts';
import { GitHubClient } from './github.ts';
import { ChatClient } from './openai.ts';
import { SkillSearch } from './search.ts';
import { loadSkillsSettings } from './settings.ts';
import { createSkillsTools } from './tools.ts';

export interface SkillsNamespaceOptions {
  env: Readonly<Record<string, string | undefined>>;
  log: Logger;
}

/** Mounts whatever is configured: with nothing set, GitHub is read anonymously and search uses the curated index. */
export function createSkillsNamespace({ env, log }: SkillsNamespaceOptions): NamespaceDefinition {
  const settings = loadSkillsSettings(env);
  const github =
    settings.githubApiUrl && settings.githubRawUrl
      ? new GitHubClient({
          apiUrl: settings.githubApiUrl,
          rawUrl: settings.githubRawUrl,
          token: settings.githubToken,
          log,
          maxFileBytes: 1024 * 1024,
        })
      : null;
  const search = new SkillSearch(settings, github, log);
  const chat =
    settings.openaiApiKey && settings.openaiBaseUrl
      ? new ChatClient({
          baseUrl: settings.openaiBaseUrl,
          apiKey: settings.openaiApiKey,
          model: settings.agentModel,
          log,
        })
      : null;
  const finder = new SkillFinder(search, github, chat);
  for (const problem of settings.problems) log.warn({ namespace: 'skills' }, problem);
  return {
    name: 'skills',
    title: 'Agent Skills: find, inspect and fetch with provenance',
    version: '0.1.0',
    instructions: NAMESPACE_INSTRUCTIONS,
    tools: createSkillsTools({ settings, github, search, finder }),
  };
}
