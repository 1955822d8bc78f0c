/**
 * GitHub contract server: the REST endpoints the skills namespace uses (repos, commits,
 * matching-refs, trees, code search) and a separate raw-content host. Trees, blob SHAs and
 * truncation behave as GitHub documents them; blob SHAs are real git SHAs of the bytes, so a
 * client that checks them against the content is checked for real. Requests without a
 * User-Agent are refused (403) as GitHub does; code search needs a token (401).
 */
import { createHash } from 'node:crypto';
import { type LoopbackServer, sendJson, startLoopback } from './loopback.ts';

export interface FixtureFile {
  content: string | Buffer;
  /** 120000 is a symbolic link: its content is the target path, as git stores it. */
  mode?: '100644' | '100755' | '120000';
  /** The raw host answers this file with a redirect to the given URL. */
  redirectTo?: string;
  /** The raw host serves different bytes than the tree names. */
  tamper?: boolean;
}

export interface FixtureRepo {
  defaultBranch: string;
  license: string | null;
  description?: string;
  /** Branch or tag name → files at that ref's commit. */
  refs: Record<string, Record<string, FixtureFile>>;
  /** Recursive listing of the root tree stops after this many entries with truncated: true. */
  truncateRootAt?: number;
  private?: boolean;
}

interface TreeItem {
  path: string;
  mode: string;
  type: 'blob' | 'tree';
  sha: string;
  size?: number;
}

function sha1(text: string | Buffer): string {
  return createHash('sha1').update(text).digest('hex');
}

export function blobSha(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

interface Built {
  commits: Map<string, { treeSha: string }>;
  trees: Map<string, TreeItem[]>;
  blobs: Map<string, { bytes: Buffer; file: FixtureFile }>;
  refShas: Map<string, string>;
}

function build(repos: Record<string, FixtureRepo>): Map<string, Built> {
  const out = new Map<string, Built>();
  for (const [full, repo] of Object.entries(repos)) {
    const built: Built = { commits: new Map(), trees: new Map(), blobs: new Map(), refShas: new Map() };
    for (const [ref, files] of Object.entries(repo.refs)) {
      const dirs = new Map<string, TreeItem[]>();
      const ensure = (dir: string) => {
        if (!dirs.has(dir)) dirs.set(dir, []);
        return dirs.get(dir) as TreeItem[];
      };
      ensure('');
      for (const [path, file] of Object.entries(files)) {
        const bytes = Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content, 'utf8');
        const sha = blobSha(bytes);
        built.blobs.set(`${sha}`, { bytes, file });
        const parts = path.split('/');
        for (let i = 1; i < parts.length; i++) ensure(parts.slice(0, i).join('/'));
        ensure(parts.slice(0, -1).join('/')).push({
          path: parts.at(-1) as string,
          mode: file.mode ?? '100644',
          type: 'blob',
          sha,
          size: bytes.length,
        });
      }
      // Children before parents, so a folder's SHA covers its contents.
      const order = [...dirs.keys()].sort(
        (a, b) => b.split('/').length - a.split('/').length || b.localeCompare(a),
      );
      const shaOf = new Map<string, string>();
      for (const dir of order) {
        const items = dirs.get(dir) as TreeItem[];
        for (const [child, childSha] of shaOf) {
          const parent = child.split('/').slice(0, -1).join('/');
          if (
            child !== '' &&
            parent === dir &&
            !items.some((item) => item.path === child.split('/').at(-1))
          ) {
            items.push({
              path: child.split('/').at(-1) as string,
              mode: '040000',
              type: 'tree',
              sha: childSha,
            });
          }
        }
        items.sort((a, b) => a.path.localeCompare(b.path));
        const sha = sha1(`tree ${JSON.stringify(items)}`);
        built.trees.set(sha, items);
        shaOf.set(dir, sha);
      }
      const treeSha = shaOf.get('') as string;
      const commitSha = sha1(`commit ${full} ${ref} ${treeSha}`);
      built.commits.set(commitSha, { treeSha });
      built.refShas.set(ref, commitSha);
    }
    out.set(full.toLowerCase(), built);
  }
  return out;
}

function recursive(built: Built, sha: string, prefix = ''): TreeItem[] {
  const items = built.trees.get(sha) ?? [];
  const out: TreeItem[] = [];
  for (const item of items) {
    const path = prefix ? `${prefix}/${item.path}` : item.path;
    out.push({ ...item, path });
    if (item.type === 'tree') out.push(...recursive(built, item.sha, path));
  }
  return out;
}

export interface GitHubContract {
  api: LoopbackServer;
  raw: LoopbackServer;
  /** API calls that carried the configured token, and raw-host calls that carried any Authorization. */
  auth: { apiWithToken: number; rawWithAuthorization: number };
  /** Commit SHA a branch or tag of a fixture repo points at. */
  commitOf(repo: string, ref: string): string;
  close(): Promise<void>;
}

const SUPPORTED_API_VERSIONS = new Set(['2022-11-28']);

export async function startGitHubContract(
  repos: Record<string, FixtureRepo>,
  token: string | null,
): Promise<GitHubContract> {
  const built = build(repos);
  const notFound = { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' };
  const counted = { apiWithToken: 0, rawWithAuthorization: 0 };

  const api = await startLoopback((req, res) => {
    if (!req.headers['user-agent']) {
      sendJson(res, 403, {
        message:
          'Request forbidden by administrative rules. Please make sure your request has a User-Agent header',
      });
      return;
    }
    const version = req.headers['x-github-api-version'];
    if (typeof version === 'string' && !SUPPORTED_API_VERSIONS.has(version)) {
      sendJson(res, 400, { message: `API version ${version} is not supported.` });
      return;
    }
    const auth = req.headers.authorization;
    if (auth !== undefined && auth === `Bearer ${token}`) counted.apiWithToken++;
    if (auth !== undefined && auth !== `Bearer ${token}`) {
      sendJson(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
      return;
    }
    const url = new URL(req.path, 'http://x');
    if (url.pathname === '/search/code') {
      if (!auth) {
        sendJson(res, 401, { message: 'Requires authentication' });
        return;
      }
      const q = url.searchParams.get('q') ?? '';
      if (!/filename:SKILL\.md/.test(q)) {
        sendJson(res, 422, { message: 'Validation Failed' });
        return;
      }
      const terms = q
        .replace(/filename:\S+/g, '')
        .toLowerCase()
        .split(/\s+/)
        .filter(Boolean);
      const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? 30));
      const items: unknown[] = [];
      for (const [full, repo] of Object.entries(repos)) {
        if (repo.private) continue;
        const b = built.get(full.toLowerCase()) as Built;
        const commit = b.refShas.get(repo.defaultBranch) as string;
        for (const [path, file] of Object.entries(repo.refs[repo.defaultBranch] ?? {})) {
          if (!path.endsWith('SKILL.md')) continue;
          const text = String(file.content).toLowerCase();
          if (!terms.every((term) => text.includes(term) || path.toLowerCase().includes(term))) continue;
          const [owner, name] = full.split('/');
          items.push({
            name: 'SKILL.md',
            path,
            sha: blobSha(Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content)),
            html_url: `https://github.com/${full}/blob/${commit}/${path}`,
            repository: {
              name,
              full_name: full,
              owner: { login: owner },
              description: repo.description ?? null,
            },
          });
        }
      }
      sendJson(res, 200, {
        total_count: items.length,
        incomplete_results: false,
        items: items.slice(0, perPage),
      });
      return;
    }
    const match = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(url.pathname);
    const full = match ? `${decodeURIComponent(match[1] ?? '')}/${decodeURIComponent(match[2] ?? '')}` : '';
    const repo = Object.entries(repos).find(([name]) => name.toLowerCase() === full.toLowerCase())?.[1];
    const b = built.get(full.toLowerCase());
    if (!match || !repo || !b || (repo.private && !auth)) {
      sendJson(res, 404, notFound);
      return;
    }
    const rest = match[3] ?? '';
    if (rest === '') {
      sendJson(res, 200, {
        full_name: full,
        default_branch: repo.defaultBranch,
        description: repo.description ?? null,
        license: repo.license ? { key: repo.license.toLowerCase(), spdx_id: repo.license } : null,
      });
      return;
    }
    let m = /^\/commits\/(.+)$/.exec(rest);
    if (m) {
      const ref = decodeURIComponent(m[1] ?? '');
      const sha = b.refShas.get(ref) ?? (b.commits.has(ref) ? ref : undefined);
      if (!sha) {
        sendJson(res, 422, { message: `No commit found for SHA: ${ref}` });
        return;
      }
      sendJson(res, 200, { sha, commit: { tree: { sha: b.commits.get(sha)?.treeSha } } });
      return;
    }
    m = /^\/git\/matching-refs\/(heads|tags)\/(.+)$/.exec(rest);
    if (m) {
      const prefix = decodeURIComponent(m[2] ?? '');
      const kind = m[1];
      // Fixture convention: refs named v… are tags, the rest branches.
      const refs = [...b.refShas.entries()].filter(([name]) => name.startsWith('v') === (kind === 'tags'));
      sendJson(
        res,
        200,
        refs
          .filter(([name]) => name.startsWith(prefix))
          .map(([name, sha]) => ({ ref: `refs/${kind}/${name}`, object: { sha, type: 'commit' } })),
      );
      return;
    }
    m = /^\/git\/trees\/([0-9a-f]{40})$/.exec(rest);
    if (m) {
      const sha = m[1] as string;
      const items = b.trees.get(sha);
      if (!items) {
        sendJson(res, 404, notFound);
        return;
      }
      const isRoot = [...b.commits.values()].some((commit) => commit.treeSha === sha);
      let tree = url.searchParams.has('recursive') ? recursive(b, sha) : items;
      let truncated = false;
      if (
        isRoot &&
        repo.truncateRootAt !== undefined &&
        url.searchParams.has('recursive') &&
        tree.length > repo.truncateRootAt
      ) {
        tree = tree.slice(0, repo.truncateRootAt);
        truncated = true;
      }
      sendJson(res, 200, {
        sha,
        url: `https://api.github.com/repos/${full}/git/trees/${sha}`,
        tree,
        truncated,
      });
      return;
    }
    sendJson(res, 404, notFound);
  });

  const raw = await startLoopback((req, res) => {
    if (req.headers.authorization !== undefined) counted.rawWithAuthorization++;
    const parts = req.path.split('?')[0]?.split('/').filter(Boolean).map(decodeURIComponent) ?? [];
    const [owner, name, ref, ...path] = parts;
    const full = `${owner}/${name}`;
    const repo = repos[full];
    const b = built.get(full.toLowerCase());
    const commitSha = b && ref ? (b.commits.has(ref) ? ref : b.refShas.get(ref)) : undefined;
    if (!repo || !b || !commitSha) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('404: Not Found');
      return;
    }
    const items = recursive(b, b.commits.get(commitSha)?.treeSha as string);
    const item = items.find((entry) => entry.path === path.join('/') && entry.type === 'blob');
    const blob = item ? b.blobs.get(item.sha) : undefined;
    if (!blob) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('404: Not Found');
      return;
    }
    if (blob.file.redirectTo) {
      res.writeHead(302, { location: blob.file.redirectTo });
      res.end();
      return;
    }
    const bytes = blob.file.tamper ? Buffer.concat([blob.bytes, Buffer.from('\n# injected\n')]) : blob.bytes;
    res.writeHead(200, {
      'content-type': 'text/plain; charset=utf-8',
      'content-length': String(bytes.length),
    });
    res.end(bytes);
  });

  return {
    api,
    raw,
    auth: counted,
    commitOf(repoName, ref) {
      return built.get(repoName.toLowerCase())?.refShas.get(ref) as string;
    },
    async close() {
      await Promise.all([api.close(), raw.close()]);
    },
  };
}
