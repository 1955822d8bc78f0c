/**
 * Repositories the skills tests read through the GitHub contract server, and a helper that
 * starts a real gateway pointed at the contract servers with the official MCP SDK client.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type FixtureRepo, type GitHubContract, startGitHubContract } from './contracts/github.ts';
import { startTestGateway, type TestGateway } from './gateway.ts';

export const GITHUB_TOKEN = 'ghp_testtoken0123456789abcdefSECRET';
export const OPENAI_KEY = 'sk-test-0123456789abcdefSECRETKEY';
export const REGISTRY_KEY = 'reg_test_0123456789SECRET';

const skill = (name: string, description: string, extra = '', body = '# Steps\n\n1. Read the input.\n') =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n${body}`;

/** Multibyte text: "é" is 2 bytes, "€" 3, "😀" 4, so byte caps land inside characters. */
export const GUIDE_MD = `# Guide\n\n${'Café € 😀 '.repeat(400)}\n`;
export const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]),
  Buffer.alloc(500, 7),
]);
export const BIG = 'x'.repeat(1024 * 1024 + 10);

export function fixtureRepos(evilUrl: string): Record<string, FixtureRepo> {
  const pdf = {
    'skills/pdf-tools/SKILL.md': {
      content: skill(
        'pdf-tools',
        'Fill and merge PDF forms when the user asks to edit a PDF.',
        'license: Apache-2.0\nallowed-tools: Bash(python3:*) Read\n',
        '# Fill a form\n\n```bash\npython3 scripts/fill.py in.pdf\n```\n\nSee references/guide.md.\n',
      ),
    },
    'skills/pdf-tools/scripts/fill.py': { content: 'print("fill")\n', mode: '100755' as const },
    'skills/pdf-tools/assets/logo.png': { content: PNG },
    'skills/pdf-tools/references/guide.md': { content: GUIDE_MD },
    'skills/pdf-tools/references/moved.md': { content: 'moved\n', redirectTo: `${evilUrl}/payload.md` },
    'skills/pdf-tools/references/tampered.md': { content: 'original\n', tamper: true },
    'skills/pdf-tools/data/big.txt': { content: BIG },
  };
  return {
    'acme/kit': {
      defaultBranch: 'main',
      license: 'MIT',
      description: 'A kit of agent skills',
      refs: {
        main: {
          'README.md': { content: '# kit\n' },
          ...pdf,
          'skills/nested/deeper/inner-skill/SKILL.md': {
            content: skill('inner-skill', 'A skill nested three folders deep for spreadsheet cleanup.'),
          },
          'skills/v1.2/SKILL.md': { content: skill('v1-2', 'A folder whose name looks like a file.') },
          'skills/v1.2/notes.txt': { content: 'notes\n' },
        },
        'feature/x': {
          'skills/pdf-tools/SKILL.md': {
            content: skill('pdf-tools', 'Feature branch version of the PDF skill.'),
          },
        },
        'feature/xy': {
          'skills/pdf-tools/SKILL.md': { content: skill('pdf-tools', 'The other feature branch.') },
        },
        'v1.0': {
          'skills/pdf-tools/SKILL.md': { content: skill('pdf-tools', 'Tagged release of the PDF skill.') },
        },
      },
    },
    'acme/huge': {
      defaultBranch: 'main',
      license: null,
      truncateRootAt: 20,
      refs: {
        main: {
          ...Object.fromEntries(
            Array.from({ length: 60 }, (_, i) => [
              `aaa/file-${String(i).padStart(3, '0')}.txt`,
              { content: `f${i}\n` },
            ]),
          ),
          'packs/alpha/deep-skill/SKILL.md': {
            content: skill('deep-skill', 'Found in a repository too big for one listing.'),
          },
          'packs/alpha/deep-skill/references/a.md': { content: 'a\n' },
        },
      },
    },
    'acme/many': {
      defaultBranch: 'main',
      license: 'MIT',
      refs: {
        main: {
          'SKILL.md': { content: skill('many', 'Root skill with many files for download caps.') },
          ...Object.fromEntries(
            Array.from({ length: 120 }, (_, i) => [
              `references/r-${String(i).padStart(3, '0')}.md`,
              { content: `# r${i}\n${'y'.repeat(2000)}\n` },
            ]),
          ),
        },
      },
    },
  };
}

export interface Connected {
  client: Client;
  close(): Promise<void>;
}

export async function connectSkills(gw: TestGateway): Promise<Client> {
  const client = new Client({ name: 'skills-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/skills/mcp`), {
    requestInit: { headers: { 'X-API-Key': gw.apiKey } },
  });
  await client.connect(transport);
  return client;
}

export async function startSkillsGateway(env: Record<string, string>, logLines?: string[]) {
  return startTestGateway({
    engine: 'node',
    env: logLines ? { LOG_LEVEL: 'trace', ...env } : env,
    ...(logLines ? { logDestination: { write: (line: string) => logLines.push(line) } } : {}),
  });
}

/** A GitHub contract server over `repos`, a gateway pointed at it, and an SDK client of it. */
export interface GitHubSkills {
  github: GitHubContract;
  gw: TestGateway;
  client: Client;
  close(): Promise<void>;
}

export async function startGitHubSkills(repos: Record<string, FixtureRepo>): Promise<GitHubSkills> {
  const github = await startGitHubContract(repos, GITHUB_TOKEN);
  const gw = await startSkillsGateway({
    GITHUB_API_URL: github.api.url,
    GITHUB_RAW_URL: github.raw.url,
    GITHUB_TOKEN,
  });
  const client = await connectSkills(gw);
  return {
    github,
    gw,
    client,
    async close() {
      await client.close();
      await gw.close();
      await github.close();
    },
  };
}

/** A tool result's structured content, or its error text as a thrown assertion. */
export function structured<T>(result: unknown): T {
  const r = result as { isError?: boolean; content?: Array<{ text?: string }>; structuredContent?: unknown };
  if (r.isError) throw new Error(`tool error: ${r.content?.[0]?.text}`);
  return r.structuredContent as T;
}

export function errorText(result: unknown): string {
  const r = result as { isError?: boolean; content?: Array<{ text?: string }> };
  if (!r.isError) throw new Error(`expected an error, got ${JSON.stringify(result).slice(0, 300)}`);
  return r.content?.[0]?.text ?? '';
}
