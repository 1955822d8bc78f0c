import type { Logger } from 'pino';
import { defineNamespace } from '../../mcp/namespace-contract.ts';
import { UPSTREAM_ERROR_CODES } from '../../upstream/namespace-kit.ts';
import { deferredParts, type LoadedParts } from '../deferred.ts';
import { NAMESPACE_INSTRUCTIONS } from './descriptions.ts';
import { loadSkillsSettings, type SkillsSettings, skillsSettings } from './settings.ts';
import type { SkillsToolsOptions } from './tools.ts';

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
    return deferredParts({
      name: 'skills',
      // The factories read the settings while building; the clients only in handlers, and the
      // listing's handlers never run, so it has none.
      listing: async () => (await import('./tools.ts')).createSkillsTools({ settings } as SkillsToolsOptions),
      // GitHub, search, the curated index and the chat client load on the first call.
      load: () => liveSkills(settings, log),
    });
  },
});

async function liveSkills(settings: SkillsSettings, log: Logger): Promise<LoadedParts> {
  const [
    { skillsCapabilities },
    { SkillFinder },
    { GitHubClient },
    { ChatClient },
    { SkillSearch },
    { createSkillsTools },
  ] = await Promise.all([
    import('./capabilities.ts'),
    import('./finder.ts'),
    import('./github.ts'),
    import('./openai.ts'),
    import('./search.ts'),
    import('./tools.ts'),
  ]);
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
}
