/**
 * skills_get keeps its SKILL.md checks by blob SHA and folder name (decision 0146): a call
 * answered from them says what the first said, and the same bytes in another folder are
 * checked as that folder's, whatever the root's answer was. Over real HTTP with the SDK client, against the GitHub
 * contract server.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type GitHubSkills, startGitHubSkills, structured } from '../support/skills-fixture.ts';

/**
 * One SKILL.md at the root of `acme/harbour` and in `skills/harbour`: the same blob checked
 * against the same name, `harbour`, which its own name is not.
 */
const SKILL_MD =
  '---\nname: tide-tables\ndescription: Read tide tables when the user asks about the sea.\n---\n\n# Steps\n\n1. Read the table.\n';

interface Finding {
  code: string;
  level: string;
}
interface GetOut {
  valid: boolean;
  errors: Finding[];
  validation_warnings: Finding[];
}

let skills: GitHubSkills;
let client: Client;

before(async () => {
  skills = await startGitHubSkills({
    'acme/harbour': {
      defaultBranch: 'main',
      license: 'MIT',
      refs: { main: { 'SKILL.md': { content: SKILL_MD }, 'skills/harbour/SKILL.md': { content: SKILL_MD } } },
    },
  });
  ({ client } = skills);
});
after(() => skills.close());

const get = async (source: string) =>
  structured<GetOut>(await client.callTool({ name: 'skills_get', arguments: { source } }));
const codes = (findings: Finding[]) => findings.map((f) => `${f.level}:${f.code}`);

test('a root skill answered again from the kept checks says what the first call said', async () => {
  const first = await get('acme/harbour');
  // At the root the name cannot match a folder yet: a warning, not an error.
  assert.equal(first.valid, true);
  assert.deepEqual(codes(first.errors), []);
  assert.ok(codes(first.validation_warnings).includes('warning:NAME_FOLDER_MISMATCH'));
  for (let i = 0; i < 3; i++) assert.deepEqual(await get('acme/harbour'), first);
});

test('the same SKILL.md in a folder of the same name is still an error there, after the root', async () => {
  await get('acme/harbour');
  const nested = await get('acme/harbour/skills/harbour');
  assert.equal(nested.valid, false);
  assert.ok(codes(nested.errors).includes('error:NAME_FOLDER_MISMATCH'));
  // And the root's answer is still the root's.
  const root = await get('acme/harbour');
  assert.deepEqual(codes(root.errors), []);
  assert.equal(root.valid, true);
});
