/**
 * skills_get keeps its SKILL.md checks by blob SHA and folder name (decision 0146), and its
 * safety warnings by commit and folder (0147): a call answered from them says what the first
 * said; the same bytes in another folder are checked as that folder's, whatever the root's
 * answer was; and another folder or another commit gets warnings of its own. Over real HTTP
 * with the SDK client, against the GitHub contract server.
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
  warnings: Array<{ code: string }>;
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
      refs: {
        main: {
          'SKILL.md': { content: SKILL_MD },
          'skills/harbour/SKILL.md': { content: SKILL_MD },
          'skills/harbour/scripts/tides.sh': { content: 'echo tides\n', mode: '100755' },
          'skills/quiet/SKILL.md': { content: SKILL_MD },
        },
        // The same folder at a later commit, where its script is gone.
        v2: { 'skills/harbour/SKILL.md': { content: SKILL_MD } },
      },
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

const warned = (out: GetOut) => out.warnings.map((w) => w.code).sort();

test("safety warnings are a folder's own, at its own commit, however often they are asked", async () => {
  const harbour = await get('acme/harbour/skills/harbour');
  assert.deepEqual(warned(harbour), ['EXECUTABLE_FILES', 'SCRIPTS_PRESENT']);
  // The same SKILL.md in a folder without scripts, at the same commit: no warnings of harbour's.
  assert.deepEqual(warned(await get('acme/harbour/skills/quiet')), []);
  // The same folder at a commit without its script: nothing of main's answer carries over.
  assert.deepEqual(warned(await get('acme/harbour@v2:skills/harbour')), []);
  for (let i = 0; i < 3; i++) assert.deepEqual(await get('acme/harbour/skills/harbour'), harbour);
});
