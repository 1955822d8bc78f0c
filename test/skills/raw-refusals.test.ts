/**
 * The GitHub client's raw fetches against the GitHub contract server: a file the raw host
 * answered wrongly for a commit (tampered bytes, a redirect, a missing file) is answered from
 * memory by the next call, while an outage is asked again.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createLogger } from '../../gateway/logger.ts';
import { GitHubClient } from '../../gateway/namespaces/skills/github.ts';
import { blobSha, type GitHubContract, startGitHubContract } from '../support/contracts/github.ts';
import { fixtureRepos, GITHUB_TOKEN } from '../support/skills-fixture.ts';

let github: GitHubContract;
let commit: string;
const FOLDER = 'skills/pdf-tools';

/** A client with empty caches, as a fresh gateway has. */
function client(): GitHubClient {
  return new GitHubClient({
    apiUrl: github.api.url,
    rawUrl: github.raw.url,
    token: GITHUB_TOKEN,
    log: createLogger('silent'),
    maxFileBytes: 1024 * 1024,
  });
}

/** Raw-host requests for one file of the folder so far. */
function fetchesOf(file: string): number {
  return github.raw.count(`GET /acme/kit/${commit}/${FOLDER}/${file}`);
}

/** The refusal `raw` threw, as an agent reads it. */
async function refusal(call: Promise<Buffer>): Promise<string> {
  const error = await call.then(
    () => assert.fail('the fetch was expected to be refused'),
    (thrown: unknown) => thrown as Error,
  );
  return error.message;
}

before(async () => {
  github = await startGitHubContract(fixtureRepos('http://127.0.0.1:9'), GITHUB_TOKEN);
  commit = github.commitOf('acme/kit', 'main');
});
after(() => github.close());

const signal = new AbortController().signal;

test('bytes that do not match the blob are refused again without a second fetch', async () => {
  const fresh = client();
  const sha = blobSha(Buffer.from('original\n'));
  const path = `${FOLDER}/references/tampered.md`;
  const first = await refusal(fresh.raw('acme', 'kit', commit, path, sha, signal));
  const second = await refusal(fresh.raw('acme', 'kit', commit, path, sha, signal));
  assert.match(first, /does not match the blob/);
  assert.equal(second, first);
  assert.equal(fetchesOf('references/tampered.md'), 1);
});

test('a refused redirect is refused again without a second fetch', async () => {
  const fresh = client();
  const sha = blobSha(Buffer.from('moved\n'));
  const path = `${FOLDER}/references/moved.md`;
  const first = await refusal(fresh.raw('acme', 'kit', commit, path, sha, signal));
  assert.match(first, /redirect/);
  assert.equal(await refusal(fresh.raw('acme', 'kit', commit, path, sha, signal)), first);
  assert.equal(fetchesOf('references/moved.md'), 1);
});

test('an outage of the raw host is asked again by the next call, which gets the file', async () => {
  const fresh = client();
  const bytes = Buffer.from('print("fill")\n');
  const path = `${FOLDER}/scripts/fill.py`;
  // Every attempt of the first call meets a 503 (idempotent fetches are retried).
  github.raw.faults.push({ match: `GET /acme/kit/${commit}/${path}`, status: 503, times: 10 });
  const failed = await refusal(fresh.raw('acme', 'kit', commit, path, blobSha(bytes), signal));
  assert.match(failed, /UPSTREAM_UNAVAILABLE/);
  const asked = fetchesOf('scripts/fill.py');
  assert.ok(asked >= 1);
  github.raw.faults.length = 0;
  assert.deepEqual(await fresh.raw('acme', 'kit', commit, path, blobSha(bytes), signal), bytes);
  assert.equal(fetchesOf('scripts/fill.py'), asked + 1);
});
