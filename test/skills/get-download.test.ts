/**
 * skills_get, skills_read_file, skills_download and skills_validate end to end: the official MCP
 * SDK client → a real gateway → the GitHub contract server (REST + raw host).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, beforeEach, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { blobSha, type GitHubContract } from '../support/contracts/github.ts';
import { type LoopbackServer, startLoopback } from '../support/contracts/loopback.ts';
import {
  errorText,
  fixtureRepos,
  GITHUB_TOKEN,
  type GitHubSkills,
  GUIDE_MD,
  PNG,
  startGitHubSkills,
  structured,
} from '../support/skills-fixture.ts';

let github: GitHubContract;
let evil: LoopbackServer;
let skills: GitHubSkills;
let client: Client;

before(async () => {
  evil = await startLoopback((_req, res) => {
    res.writeHead(200);
    res.end('# injected by another host');
  });
  skills = await startGitHubSkills(fixtureRepos(evil.url));
  ({ github, client } = skills);
});
after(async () => {
  await skills.close();
  await evil.close();
});
beforeEach(() => {
  github.api.faults.length = 0;
  github.raw.faults.length = 0;
});

interface GetResult {
  provenance: {
    owner: string;
    repo: string;
    ref: string;
    commit: string;
    path: string;
    source: string;
    url: string;
    license: string | null;
  };
  skill: { name: string; description: string; allowed_tools: string[] };
  body: string;
  valid: boolean;
  errors: Array<{ code: string }>;
  warnings: Array<{ code: string; examples: string[] }>;
  files: Array<{
    path: string;
    size: number;
    git_sha: string;
    sha256: string | null;
    executable: boolean;
    omitted: string | null;
  }>;
  files_truncated: boolean;
  untrusted: string;
}

const get = (args: Record<string, unknown>) => client.callTool({ name: 'skills_get', arguments: args });
const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

test('skills_get pins the commit, validates SKILL.md and lists files with sizes and digests', async () => {
  const result = structured<GetResult>(await get({ source: 'acme/kit/skills/pdf-tools' }));
  const commit = github.commitOf('acme/kit', 'main');
  assert.equal(result.provenance.commit, commit);
  assert.equal(result.provenance.ref, 'main');
  assert.equal(result.provenance.source, `acme/kit@${commit}:skills/pdf-tools`);
  assert.equal(result.provenance.url, `https://github.com/acme/kit/tree/${commit}/skills/pdf-tools`);
  assert.equal(
    result.provenance.license,
    'Apache-2.0',
    'frontmatter licence wins over the repository licence',
  );
  assert.equal(result.skill.name, 'pdf-tools');
  assert.equal(result.valid, true);
  assert.match(result.body, /# Fill a form/);
  assert.equal(result.files[0]?.path, 'SKILL.md');
  const logo = result.files.find((file) => file.path === 'assets/logo.png');
  assert.equal(logo?.size, PNG.length);
  assert.equal(logo?.sha256, sha256(PNG));
  assert.equal(logo?.git_sha, blobSha(PNG));
  const big = result.files.find((file) => file.path === 'data/big.txt');
  assert.equal(big?.sha256, null, 'a file over the fetch limit is listed, not read');
  assert.match(big?.omitted ?? '', /over/);
  assert.equal(result.files.find((file) => file.path === 'scripts/fill.py')?.executable, true);
  assert.deepEqual(result.warnings.map((w) => w.code).sort(), [
    'ALLOWED_TOOLS',
    'EXECUTABLE_FILES',
    'SCRIPTS_PRESENT',
    'SHELL_SNIPPETS',
  ]);
  assert.match(result.untrusted, /untrusted/);
  // Every raw read named the commit SHA, never the branch.
  const rawPaths = github.raw.requests.map((req) => req.path);
  assert.ok(rawPaths.length > 0);
  for (const path of rawPaths) assert.ok(path.startsWith(`/acme/kit/${commit}/`), path);
});

test('origin weakness: one listing call per directory — one trees call lists a whole nested folder', async () => {
  const before = github.api.count('GET /repos/acme/kit/git/trees/');
  const result = structured<GetResult>(
    await get({ source: 'https://github.com/acme/kit/tree/main/skills/nested/deeper/inner-skill' }),
  );
  assert.equal(result.skill.name, 'inner-skill');
  assert.equal(result.provenance.path, 'skills/nested/deeper/inner-skill');
  // The root tree of this commit may already be cached from the test before; at most one call.
  assert.ok(github.api.count('GET /repos/acme/kit/git/trees/') - before <= 1);
  assert.equal(github.api.count('GET /repos/acme/kit/contents'), 0, 'no contents-API walk');
});

test('origin weakness: branch names containing "/" broke ref parsing — tree/feature/x/... resolves to feature/x', async () => {
  const viaUrl = structured<GetResult>(
    await get({ source: 'https://github.com/acme/kit/tree/feature/x/skills/pdf-tools' }),
  );
  assert.equal(viaUrl.provenance.ref, 'feature/x');
  assert.equal(viaUrl.provenance.commit, github.commitOf('acme/kit', 'feature/x'));
  assert.match(viaUrl.skill.description, /Feature branch version/);
  const pinned = structured<GetResult>(await get({ source: 'acme/kit@feature/xy:skills/pdf-tools' }));
  assert.match(pinned.skill.description, /other feature branch/);
  const tag = structured<GetResult>(
    await get({ source: 'https://github.com/acme/kit/tree/v1.0/skills/pdf-tools' }),
  );
  assert.match(tag.skill.description, /Tagged release/);
});

test('origin weakness: folders containing "." were mistaken for files — the tree decides', async () => {
  const result = structured<GetResult>(await get({ source: 'acme/kit/skills/v1.2' }));
  assert.equal(result.provenance.path, 'skills/v1.2');
  assert.deepEqual(
    result.files.map((file) => file.path),
    ['SKILL.md', 'notes.txt'],
  );
  // name v1-2 cannot equal the folder "v1.2": validation says so rather than hiding it.
  assert.ok(result.errors.some((error) => error.code === 'NAME_FOLDER_MISMATCH'));
  // A source naming a file inside the folder resolves to that folder.
  const viaFile = structured<GetResult>(
    await get({ source: 'https://github.com/acme/kit/blob/main/skills/pdf-tools/SKILL.md' }),
  );
  assert.equal(viaFile.provenance.path, 'skills/pdf-tools');
});

test('a repository too large for one listing (truncated tree) is walked down to the folder', async () => {
  const result = structured<GetResult>(await get({ source: 'acme/huge/packs/alpha/deep-skill' }));
  assert.equal(result.skill.name, 'deep-skill');
  assert.deepEqual(
    result.files.map((file) => file.path),
    ['SKILL.md', 'references/a.md'],
  );
  assert.equal(result.files_truncated, false);
});

test('a folder without SKILL.md names the skill folders below it, and skill=<name> picks one', async () => {
  const text = errorText(await get({ source: 'acme/kit' }));
  assert.match(text, /NOT_FOUND/);
  assert.match(text, /skills\/pdf-tools/);
  assert.match(text, /skills\/nested\/deeper\/inner-skill/);
  const picked = structured<GetResult>(await get({ source: 'acme/kit', skill: 'inner-skill' }));
  assert.equal(picked.provenance.path, 'skills/nested/deeper/inner-skill');
  assert.match(
    errorText(await get({ source: 'acme/kit/skills/nope' })),
    /NOT_FOUND.*Nothing at "skills\/nope"/,
  );
  assert.match(errorText(await get({ source: 'acme/kit@no-such-branch:skills/pdf-tools' })), /NOT_FOUND/);
  assert.match(errorText(await get({ source: 'acme/missing' })), /NOT_FOUND.*GITHUB_TOKEN/);
});

interface FileOut {
  path: string;
  encoding: 'utf-8' | 'base64' | null;
  content: string | null;
  clipped: boolean;
  sha256: string | null;
  omitted: string | null;
}

test('origin weakness: binary files returned as strings — binary comes back as base64 with its digest', async () => {
  const result = structured<{ file: FileOut }>(
    await client.callTool({
      name: 'skills_read_file',
      arguments: { source: 'acme/kit/skills/pdf-tools', path: 'assets/logo.png' },
    }),
  );
  assert.equal(result.file.encoding, 'base64');
  assert.deepEqual(Buffer.from(result.file.content ?? '', 'base64'), PNG);
  assert.equal(result.file.sha256, sha256(PNG));
});

test('origin weakness: clip() cut bytes mid-character — text is clipped at a UTF-8 boundary', async () => {
  for (const max of [9, 10, 11, 12, 13, 100, 1001]) {
    const result = structured<{ file: FileOut }>(
      await client.callTool({
        name: 'skills_read_file',
        arguments: { source: 'acme/kit/skills/pdf-tools', path: 'references/guide.md', max_bytes: max },
      }),
    );
    const content = result.file.content ?? '';
    assert.equal(result.file.clipped, true);
    assert.ok(Buffer.byteLength(content) <= max);
    assert.ok(!content.includes('\uFFFD'), `no broken character at ${max}`);
    assert.ok(GUIDE_MD.startsWith(content), `clipped text is a prefix at ${max}`);
    assert.ok(Buffer.byteLength(content) > max - 4, 'at most one character is dropped');
    assert.equal(result.file.sha256, sha256(GUIDE_MD), 'the digest covers the whole file');
  }
});

test('origin weakness: redirects were followed without re-checking the host — a raw redirect is refused', async () => {
  const text = errorText(
    await client.callTool({
      name: 'skills_read_file',
      arguments: { source: 'acme/kit/skills/pdf-tools', path: 'references/moved.md' },
    }),
  );
  assert.match(text, /UPSTREAM_ERROR.*redirect/);
  assert.equal(evil.requests.length, 0, 'the foreign host was never contacted');
});

test('raw bytes that do not match the commit’s blob SHA are refused', async () => {
  const text = errorText(
    await client.callTool({
      name: 'skills_read_file',
      arguments: { source: 'acme/kit/skills/pdf-tools', path: 'references/tampered.md' },
    }),
  );
  assert.match(text, /does not match the blob/);
});

interface DownloadOut {
  provenance: { commit: string };
  files: FileOut[];
  file_count: number;
  total_bytes: number;
  truncated: boolean;
}

test('origin weakness: silent truncation at 50 files — skills_download caps files and bytes and says truncated', async () => {
  const capped = structured<DownloadOut>(
    await client.callTool({
      name: 'skills_download',
      arguments: { source: 'acme/many', max_files: 10, max_bytes: 8 * 1024 },
    }),
  );
  assert.equal(capped.file_count, 121);
  assert.equal(capped.files.length, 10);
  assert.equal(capped.truncated, true);
  assert.ok(capped.total_bytes <= 8 * 1024);
  assert.equal(capped.files[0]?.path, 'SKILL.md');
  assert.ok(
    capped.files.some((file) => file.omitted !== null || file.clipped),
    'the byte cap shows per file',
  );
  for (const file of capped.files)
    assert.match(file.sha256 ?? '', /^[0-9a-f]{64}$/, 'digests even for omitted content');

  const whole = structured<DownloadOut>(
    await client.callTool({ name: 'skills_download', arguments: { source: 'acme/kit/skills/v1.2' } }),
  );
  assert.equal(whole.truncated, false);
  assert.deepEqual(
    whole.files.map((file) => [file.path, file.encoding, file.content]),
    [
      ['SKILL.md', 'utf-8', whole.files[0]?.content],
      ['notes.txt', 'utf-8', 'notes\n'],
    ],
  );
});

test('skills_download of a folder with a binary asset, an oversized file and a refused redirect reports each', async () => {
  const result = structured<DownloadOut>(
    await client.callTool({
      name: 'skills_download',
      arguments: { source: 'acme/kit/skills/pdf-tools', max_bytes: 2 * 1024 * 1024 },
    }),
  );
  const byPath = new Map(result.files.map((file) => [file.path, file]));
  assert.equal(byPath.get('assets/logo.png')?.encoding, 'base64');
  assert.match(byPath.get('data/big.txt')?.omitted ?? '', /over/);
  assert.match(byPath.get('references/moved.md')?.omitted ?? '', /redirect/);
  assert.equal(result.truncated, true);
  assert.equal(evil.requests.length, 0);
});

test('GitHub rate-limit answers become RATE_LIMITED with the reset time, without retrying', async () => {
  const reset = Math.floor(Date.parse('2030-01-01T00:00:00Z') / 1000);
  github.api.faults.push({
    match: 'GET /repos/acme/limited',
    status: 403,
    headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
    body: JSON.stringify({ message: 'API rate limit exceeded for 127.0.0.1.' }),
    times: 5,
  });
  // A repository not seen before, so no cached answer hides the limit.
  const before = github.api.count('GET /repos/acme/limited');
  const text = errorText(await get({ source: 'acme/limited/skills/pdf-tools' }));
  assert.match(text, /^\[RATE_LIMITED\]/);
  assert.match(text, /2030-01-01T00:00:00\.000Z/);
  assert.equal(github.api.count('GET /repos/acme/limited') - before, 1, 'a primary limit is not retried');
});

test('skills_validate reads a source at a pinned commit and checks the name against the folder', async () => {
  const result = structured<{
    valid: boolean;
    errors: Array<{ code: string }>;
    checked: { source: string; folder_name: string };
  }>(await client.callTool({ name: 'skills_validate', arguments: { source: 'acme/kit/skills/v1.2' } }));
  assert.equal(result.valid, false);
  assert.equal(result.checked.folder_name, 'v1.2');
  assert.match(result.checked.source, /^acme\/kit@[0-9a-f]{40}:skills\/v1\.2$/);
  assert.ok(result.errors.some((error) => error.code === 'NAME_FOLDER_MISMATCH'));
});

test('the GitHub token never appears in results or error messages', async () => {
  const ok = await get({ source: 'acme/kit/skills/pdf-tools' });
  const failed = await get({ source: 'acme/kit/skills/nope' });
  assert.ok(!JSON.stringify([ok, failed]).includes(GITHUB_TOKEN));
});

test('origin weakness: unauthenticated GitHub (60 calls an hour) — GITHUB_TOKEN goes to every API call, never to the raw host', async () => {
  structured<GetResult>(await get({ source: 'acme/kit/skills/pdf-tools' }));
  assert.ok(github.api.requests.length > 0);
  // Calls answered by a fault script (the rate-limit test) never reach the counting handler.
  const faulted = github.api.count('GET /repos/acme/limited');
  assert.equal(github.auth.apiWithToken, github.api.requests.length - faulted);
  assert.equal(github.auth.rawWithAuthorization, 0);
});

test('a commit-pinned source is served from the cache keyed by its SHA', async () => {
  const commit = github.commitOf('acme/kit', 'main');
  const source = `acme/kit@${commit}:skills/v1.2`;
  structured<GetResult>(await get({ source }));
  const api = github.api.requests.length;
  const raw = github.raw.requests.length;
  const again = structured<GetResult>(await get({ source }));
  assert.equal(again.provenance.commit, commit);
  assert.equal(github.api.requests.length, api, 'no API call the second time');
  assert.equal(github.raw.requests.length, raw, 'no raw read the second time');
});

test('skills_get lists every file of a large folder but reads only a bounded set for digests', async () => {
  const result = structured<GetResult>(await get({ source: 'acme/many' }));
  assert.equal(result.files.length, 121);
  const digested = result.files.filter((file) => file.sha256 !== null);
  assert.equal(digested.length, 50);
  assert.equal(result.files[0]?.path, 'SKILL.md');
  assert.ok(result.files.every((file) => /^[0-9a-f]{40}$/.test(file.git_sha)));
  assert.match(result.files.at(-1)?.omitted ?? '', /digest budget/);
});
