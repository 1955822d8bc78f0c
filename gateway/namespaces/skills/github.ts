import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { UpstreamError } from '../../upstream/errors.ts';
import { createUpstreamHttp, type ErrorDescription } from '../../upstream/http.ts';
import { TtlCache } from './cache.ts';
import { isCommitSha } from './source.ts';

/**
 * GitHub REST and raw content, on the shared upstream layer. Every file is read by commit SHA
 * from the raw host (never by branch, never by following a redirect) and checked against the
 * blob SHA the commit's tree names, so the bytes returned are provably the commit's bytes.
 */
export interface TreeEntry {
  path: string;
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string;
  size?: number;
}

export interface Commit {
  sha: string;
  treeSha: string;
}

export interface RepoInfo {
  defaultBranch: string;
  license: string | null;
  description: string | null;
}

export interface CodeSearchHit {
  owner: string;
  repo: string;
  path: string;
  /** The commit SHA or branch named in the hit's html_url. */
  ref: string | null;
  repoDescription: string | null;
  /** Git blob SHA of the SKILL.md, so its bytes can be read and checked. */
  blobSha: string | null;
}

export interface GitHubOptions {
  apiUrl: string;
  rawUrl: string;
  token: string | null;
  log: Logger;
  fetch?: typeof fetch;
  /** Largest file ever fetched; bigger files are listed but not read. */
  maxFileBytes: number;
}

const REF_TTL_MS = 60_000;
const CONTENT_TTL_MS = 10 * 60_000;
/**
 * A raw fetch the host answered wrongly is answered from memory this long: the URL names a
 * commit, so a refused redirect or bytes that do not match the tree's blob will be the same
 * on the next call, and every skills_get of the folder would fetch it again.
 */
const REFUSED_TTL_MS = REF_TTL_MS;

/**
 * Failures a repeat of the same commit-addressed fetch would meet again. Not outages, limits
 * or timeouts, and not a 404: a raw host's cache may not have a commit pushed moments ago.
 */
function refusedForGood(error: unknown): error is UpstreamError {
  return error instanceof UpstreamError && error.code === 'UPSTREAM_ERROR';
}

function enc(segment: string): string {
  return encodeURIComponent(segment);
}

function encPath(path: string): string {
  return path.split('/').map(enc).join('/');
}

/** GitHub's rate-limit answers: 403/429 with x-ratelimit-remaining 0, or a secondary limit with Retry-After. */
function describeGitHubError(status: number, body: string, headers: Headers): ErrorDescription {
  let message = '';
  try {
    message = String((JSON.parse(body) as { message?: unknown }).message ?? '');
  } catch {
    message = body.slice(0, 200);
  }
  const remaining = headers.get('x-ratelimit-remaining');
  const reset = Number(headers.get('x-ratelimit-reset'));
  if (
    (status === 403 || status === 429) &&
    (remaining === '0' || headers.has('retry-after') || /rate limit/i.test(message))
  ) {
    const resetAt = Number.isFinite(reset) && reset > 0 ? new Date(reset * 1000).toISOString() : null;
    return {
      code: 'RATE_LIMITED',
      detail: message.slice(0, 200),
      ...(resetAt ? { note: `limit resets at ${resetAt}` } : {}),
      advice: resetAt
        ? `Wait until ${resetAt}, or set GITHUB_TOKEN for a higher limit.`
        : 'Wait a minute, or set GITHUB_TOKEN for a higher limit.',
    };
  }
  // GitHub answers an unknown branch, tag or SHA on /commits/{ref} with 422, not 404.
  if (status === 404 || (status === 422 && /no commit found/i.test(message))) {
    return {
      code: 'NOT_FOUND',
      detail: message.slice(0, 200) || 'Not Found',
      advice:
        'Check owner, repository, ref and path; a private repository needs a GITHUB_TOKEN that can read it.',
    };
  }
  if (status === 401) {
    return {
      code: 'AUTH_REJECTED',
      detail: message.slice(0, 200),
      advice: 'GITHUB_TOKEN was refused: renew it and restart the gateway.',
    };
  }
  return { detail: message.slice(0, 200) };
}

/** The SHA git itself gives a blob: sha1("blob <size>\0" + bytes). */
function gitBlobSha(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/**
 * Digests by buffer: a kept blob is one Buffer handed to every call that lists it, and hashing
 * it again on each was a tenth of a repeated skills_get's CPU (decision 0147). No caller
 * changes a buffer after reading it, and an entry goes with its buffer.
 */
const digests = new WeakMap<Buffer, string>();

export function sha256(bytes: Buffer): string {
  let hex = digests.get(bytes);
  if (hex === undefined) {
    hex = createHash('sha256').update(bytes).digest('hex');
    digests.set(bytes, hex);
  }
  return hex;
}

export class GitHubClient {
  private readonly http;
  private readonly refs = new TtlCache<Commit>(2_000);
  private readonly repos = new TtlCache<RepoInfo>(2_000);
  private readonly trees = new TtlCache<{ entries: TreeEntry[]; truncated: boolean }>(
    20_000,
    (t) => t.entries.length + 1,
  );
  private readonly blobs = new TtlCache<Buffer>(32 * 1024 * 1024, (b) => b.length + 64);
  private readonly refusedBlobs = new TtlCache<UpstreamError>(4096);

  constructor(private readonly options: GitHubOptions) {
    this.http = createUpstreamHttp({
      service: 'GitHub',
      log: options.log,
      describeError: describeGitHubError,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  get authenticated(): boolean {
    return this.options.token !== null;
  }

  private async api<T>(
    path: string,
    route: string,
    signal: AbortSignal,
    accept = 'application/vnd.github+json',
  ): Promise<T> {
    const { token } = this.options;
    const response = await this.http.request({
      method: 'GET',
      url: `${this.options.apiUrl}${path}`,
      route,
      signal,
      idempotent: true,
      headers: { accept, 'x-github-api-version': '2022-11-28', 'user-agent': 'mcp-gateway-skills' },
      ...(token ? { authorize: async () => `Bearer ${token}` } : {}),
    });
    return response.json<T>();
  }

  async repo(owner: string, repo: string, signal: AbortSignal): Promise<RepoInfo> {
    const key = `${owner}/${repo}`.toLowerCase();
    const cached = this.repos.get(key);
    if (cached) return cached;
    const data = await this.api<{
      default_branch?: string;
      description?: string | null;
      license?: { spdx_id?: string } | null;
    }>(`/repos/${enc(owner)}/${enc(repo)}`, 'GET /repos/{owner}/{repo}', signal);
    const spdx = data.license?.spdx_id;
    const info: RepoInfo = {
      defaultBranch: data.default_branch ?? 'main',
      license: spdx && spdx !== 'NOASSERTION' ? spdx : null,
      description: typeof data.description === 'string' ? data.description : null,
    };
    this.repos.set(key, info, 5 * REF_TTL_MS);
    return info;
  }

  /** Branches and tags whose names start with `prefix`, for splitting `tree/<ref>/<path>` URLs. */
  async refsStartingWith(
    owner: string,
    repo: string,
    prefix: string,
    signal: AbortSignal,
  ): Promise<string[]> {
    const names: string[] = [];
    for (const kind of ['heads', 'tags'] as const) {
      const refs = await this.api<Array<{ ref?: string }>>(
        `/repos/${enc(owner)}/${enc(repo)}/git/matching-refs/${kind}/${encPath(prefix)}`,
        `GET /repos/{owner}/{repo}/git/matching-refs/${kind}/{prefix}`,
        signal,
      );
      for (const item of refs) {
        if (typeof item.ref === 'string') names.push(item.ref.replace(/^refs\/(heads|tags)\//, ''));
      }
      if (names.length > 0) break;
    }
    return names;
  }

  async commit(owner: string, repo: string, ref: string, signal: AbortSignal): Promise<Commit> {
    const key = `${owner}/${repo}@${ref}`.toLowerCase();
    const cached = this.refs.get(key);
    if (cached) return cached;
    const data = await this.api<{ sha?: string; commit?: { tree?: { sha?: string } } }>(
      `/repos/${enc(owner)}/${enc(repo)}/commits/${encPath(ref)}`,
      'GET /repos/{owner}/{repo}/commits/{ref}',
      signal,
    );
    if (typeof data.sha !== 'string' || typeof data.commit?.tree?.sha !== 'string') {
      throw new UpstreamError(
        'UPSTREAM_ERROR',
        'GitHub answered a commit lookup without a commit SHA; try again.',
      );
    }
    const commit = { sha: data.sha, treeSha: data.commit.tree.sha };
    // A commit SHA never moves; a branch does, so its answer is kept only briefly.
    this.refs.set(key, commit, isCommitSha(ref) ? CONTENT_TTL_MS : REF_TTL_MS);
    return commit;
  }

  async tree(owner: string, repo: string, sha: string, recursive: boolean, signal: AbortSignal) {
    const key = `${sha}:${recursive}`;
    const cached = this.trees.get(key);
    if (cached) return cached;
    const data = await this.api<{ tree?: TreeEntry[]; truncated?: boolean }>(
      `/repos/${enc(owner)}/${enc(repo)}/git/trees/${enc(sha)}${recursive ? '?recursive=1' : ''}`,
      'GET /repos/{owner}/{repo}/git/trees/{sha}',
      signal,
    );
    const result = { entries: Array.isArray(data.tree) ? data.tree : [], truncated: data.truncated === true };
    this.trees.set(key, result, CONTENT_TTL_MS);
    return result;
  }

  /**
   * Everything under `path` at `commit` with one recursive trees call in the usual case. When
   * the repository is too large for one listing (GitHub sets `truncated`), walks down to the
   * folder one level at a time and lists just that folder.
   */
  async listPath(owner: string, repo: string, commit: Commit, path: string, signal: AbortSignal) {
    const root = await this.tree(owner, repo, commit.treeSha, true, signal);
    const self = path === '' ? undefined : root.entries.find((entry) => entry.path === path);
    if (path === '' || !root.truncated || self) {
      const prefix = path === '' ? '' : `${path}/`;
      return {
        kind: path === '' ? ('tree' as const) : (self?.type ?? null),
        entry: self ?? null,
        entries: root.entries
          .filter((entry) => entry.path.startsWith(prefix))
          .map((entry) => ({ ...entry, path: entry.path.slice(prefix.length) })),
        truncated: root.truncated,
        all: root.entries,
      };
    }
    let sha = commit.treeSha;
    const segments = path.split('/');
    let found: TreeEntry | null = null;
    for (const [i, segment] of segments.entries()) {
      const level = await this.tree(owner, repo, sha, false, signal);
      const entry = level.entries.find((item) => item.path === segment);
      if (!entry) return { kind: null, entry: null, entries: [], truncated: false, all: [] };
      found = { ...entry, path: segments.slice(0, i + 1).join('/') };
      if (entry.type !== 'tree') {
        if (i === segments.length - 1)
          return { kind: entry.type, entry: found, entries: [], truncated: false, all: [] };
        return { kind: null, entry: null, entries: [], truncated: false, all: [] };
      }
      sha = entry.sha;
    }
    const folder = await this.tree(owner, repo, sha, true, signal);
    return {
      kind: 'tree' as const,
      entry: found,
      entries: folder.entries,
      truncated: folder.truncated,
      all: [],
    };
  }

  /** One file's bytes at a commit, checked against the blob SHA from the tree. */
  async raw(
    owner: string,
    repo: string,
    commitSha: string,
    path: string,
    blobSha: string,
    signal: AbortSignal,
  ): Promise<Buffer> {
    const cached = this.blobs.get(blobSha);
    if (cached) return cached;
    const url = new URL(
      `${this.options.rawUrl}/${enc(owner)}/${enc(repo)}/${enc(commitSha)}/${encPath(path)}`,
    );
    const key = `${blobSha} ${url.href}`;
    const refused = this.refusedBlobs.get(key);
    if (refused) throw refused;
    try {
      return await this.fetchBlob(url, path, blobSha, signal);
    } catch (error) {
      if (refusedForGood(error)) this.refusedBlobs.set(key, error, REFUSED_TTL_MS);
      throw error;
    }
  }

  private async fetchBlob(url: URL, path: string, blobSha: string, signal: AbortSignal): Promise<Buffer> {
    const response = await this.http.request({
      method: 'GET',
      url,
      route: 'GET raw /{owner}/{repo}/{sha}/{path}',
      signal,
      idempotent: true,
      headers: { accept: '*/*', 'user-agent': 'mcp-gateway-skills' },
      maxResponseBytes: this.options.maxFileBytes,
      // The raw URL names a commit, so an honest raw host never needs to redirect: refuse all.
    });
    const bytes = response.body;
    if (gitBlobSha(bytes) !== blobSha) {
      throw new UpstreamError(
        'UPSTREAM_ERROR',
        `The raw content of ${path} does not match the blob the commit names (git sha ${blobSha.slice(0, 12)}); nothing was returned. Check GITHUB_RAW_URL, then try again.`,
      );
    }
    this.blobs.set(blobSha, bytes, CONTENT_TTL_MS);
    return bytes;
  }

  /** Code search for SKILL.md files; GitHub requires a token for this endpoint. */
  async searchCode(query: string, limit: number, signal: AbortSignal): Promise<CodeSearchHit[]> {
    const q = `${query} filename:SKILL.md`;
    const data = await this.api<{
      items?: Array<{
        path?: string;
        sha?: string;
        html_url?: string;
        repository?: { name?: string; owner?: { login?: string }; description?: string | null };
      }>;
    }>(`/search/code?q=${encodeURIComponent(q)}&per_page=${limit}`, 'GET /search/code', signal);
    const hits: CodeSearchHit[] = [];
    for (const item of data.items ?? []) {
      const owner = item.repository?.owner?.login;
      const repo = item.repository?.name;
      if (typeof owner !== 'string' || typeof repo !== 'string' || typeof item.path !== 'string') continue;
      if (!item.path.endsWith('SKILL.md')) continue;
      const ref = /\/blob\/([^/]+)\//.exec(item.html_url ?? '')?.[1] ?? null;
      hits.push({
        owner,
        repo,
        path: item.path.split('/').slice(0, -1).join('/'),
        ref,
        repoDescription:
          typeof item.repository?.description === 'string' ? item.repository.description : null,
        blobSha: typeof item.sha === 'string' && /^[0-9a-f]{40}$/.test(item.sha) ? item.sha : null,
      });
    }
    return hits;
  }
}
