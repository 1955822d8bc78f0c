import { ToolError } from '../../mcp/tool.ts';

/**
 * Where a skill lives on GitHub, as an agent may write it:
 *   https://github.com/o/r[/tree|blob/<ref>/<path>]   https://raw.githubusercontent.com/o/r/<ref>/<path>
 *   o/r[/path]                                         o/r@<ref>[:path]
 * In URL forms a branch name may contain `/` (`tree/feature/x/skills/pdf`), so the split between
 * ref and path is left open (`refAndPath`) until the repository's refs are known.
 */
export interface SkillSource {
  owner: string;
  repo: string;
  /** An explicit ref; null means the default branch (or: not split yet, see refAndPath). */
  ref: string | null;
  /** Folder or file path inside the repository, without leading or trailing `/`; '' is the root. */
  path: string;
  /** URL forms only: the segments after `tree/`, `blob/` or the raw host's repo, ref and path together. */
  refAndPath: string[] | null;
}

/** Hosts compared by exact equality: a suffix test would accept `evilgithubusercontent.com`. */
const GITHUB_WEB_HOSTS = new Set(['github.com', 'www.github.com']);
const GITHUB_RAW_HOSTS = new Set(['raw.githubusercontent.com']);

const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const REPO = /^[A-Za-z0-9._-]{1,100}$/;
const SOURCE_MAX = 600;

function invalid(message: string): ToolError {
  return new ToolError('INVALID_ARGUMENT', `[INVALID_ARGUMENT] ${message}`);
}

function checkOwnerRepo(owner: string, repo: string): void {
  if (!OWNER.test(owner)) throw invalid(`"${owner.slice(0, 60)}" is not a GitHub owner name.`);
  if (!REPO.test(repo) || repo === '.' || repo === '..') {
    throw invalid(`"${repo.slice(0, 110)}" is not a GitHub repository name.`);
  }
}

/** Rejects what git itself refuses in a ref name, so nothing odd reaches a URL. */
function checkRef(ref: string): string {
  if (
    ref.length === 0 ||
    ref.length > 255 ||
    ref.startsWith('/') ||
    ref.endsWith('/') ||
    ref.endsWith('.lock') ||
    ref.endsWith('.') ||
    ref.includes('..') ||
    ref.includes('//') ||
    ref.includes('@{') ||
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    /[\u0000-\u0020\u007f~^:?*[\\]/.test(ref)
  ) {
    throw invalid(`"${ref.slice(0, 80)}" is not a valid git ref (branch, tag or commit).`);
  }
  return ref;
}

function checkSegments(segments: string[], what: string): string[] {
  for (const segment of segments) {
    if (
      segment === '' ||
      segment === '.' ||
      segment === '..' ||
      segment.includes('\\') ||
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
      /[\u0000-\u001f\u007f]/.test(segment)
    ) {
      throw invalid(`${what} has an empty, "." or ".." segment or a control character; give a plain path.`);
    }
  }
  return segments;
}

/**
 * Names Windows gives to devices whatever the extension (`nul.txt` is the null device), and
 * segments it trims at the end (`.. ` and `...` lose their trailing dots and spaces, so the
 * first reads as `..`): written there, such a file lands on a device or outside the folder.
 */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\.[^.]*)?$/i;

/**
 * A path from a commit's tree that is safe to write below a skill folder on any common
 * filesystem. Git itself stores names Windows reads as paths (`..\..\x`, `C:x`), and a tree
 * from a misbehaving API could hold `..`; an agent installing the files would write them
 * outside the folder.
 */
export function isSafeRelativePath(path: string): boolean {
  return path.split('/').every(
    (segment) =>
      segment !== '' &&
      segment !== '.' &&
      segment !== '..' &&
      !/[. ]$/.test(segment) &&
      !WINDOWS_DEVICE.test(segment) &&
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
      !/[\\:\u0000-\u001f\u007f]/.test(segment),
  );
}

/** Normalizes a repository path given by a caller: no leading/trailing slash, no `..`. */
export function normalizePath(path: string, what = 'The path'): string {
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return '';
  return checkSegments(trimmed.split('/'), what).join('/');
}

function decodeSegments(pathname: string): string[] {
  try {
    return pathname
      .split('/')
      .filter((segment) => segment !== '')
      .map((segment) => decodeURIComponent(segment));
  } catch {
    throw invalid('The URL path is not valid percent-encoding.');
  }
}

function parseUrl(input: string): SkillSource {
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(input) ? input : `https://${input}`);
  } catch {
    throw invalid(`"${input.slice(0, 100)}" is not a URL or owner/repo source.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw invalid('Only https GitHub URLs are accepted.');
  if (url.username || url.password || url.port)
    throw invalid('GitHub URLs must not carry credentials or a port.');
  const host = url.hostname.toLowerCase();
  const segments = decodeSegments(url.pathname);
  if (GITHUB_WEB_HOSTS.has(host)) {
    const [owner = '', rawRepo = '', kind, ...rest] = segments;
    const repo = rawRepo.replace(/\.git$/, '');
    checkOwnerRepo(owner, repo);
    if (kind === undefined) return { owner, repo, ref: null, path: '', refAndPath: null };
    if ((kind === 'tree' || kind === 'blob') && rest.length > 0) {
      return { owner, repo, ref: null, path: '', refAndPath: checkSegments(rest, 'The URL') };
    }
    throw invalid(
      'A GitHub URL must point at a repository, or at a folder (/tree/<ref>/<path>) or file (/blob/<ref>/<path>).',
    );
  }
  if (GITHUB_RAW_HOSTS.has(host)) {
    const [owner = '', repo = '', ...rest] = segments;
    checkOwnerRepo(owner, repo);
    if (rest.length < 2) throw invalid('A raw.githubusercontent.com URL needs /<owner>/<repo>/<ref>/<path>.');
    return { owner, repo, ref: null, path: '', refAndPath: checkSegments(rest, 'The URL') };
  }
  throw invalid(
    `Host "${host.slice(0, 100)}" is not GitHub: give a github.com or raw.githubusercontent.com URL, or owner/repo[/path], or owner/repo@ref:path.`,
  );
}

export function parseSource(input: string): SkillSource {
  const text = input.trim();
  if (text.length === 0)
    throw invalid('source is empty: give owner/repo[/path], owner/repo@ref:path or a GitHub URL.');
  if (text.length > SOURCE_MAX) throw invalid(`source is longer than ${SOURCE_MAX} characters.`);
  if (
    text.includes('://') ||
    /^(www\.)?github\.com\//i.test(text) ||
    /^[a-z0-9.-]+\.[a-z]{2,}\//i.test(text)
  ) {
    return parseUrl(text);
  }
  const pinned = /^([^/@:\s]+)\/([^/@:\s]+)@([^:]+)(?::(.*))?$/.exec(text);
  if (pinned) {
    const [, owner = '', repo = '', ref = '', path = ''] = pinned;
    checkOwnerRepo(owner, repo);
    return { owner, repo, ref: checkRef(ref), path: normalizePath(path), refAndPath: null };
  }
  const [owner = '', repo = '', ...rest] = text.split('/');
  if (repo === '') throw invalid(`"${text.slice(0, 100)}" needs at least owner/repo.`);
  checkOwnerRepo(owner, repo);
  return { owner, repo, ref: null, path: normalizePath(rest.join('/')), refAndPath: null };
}

/**
 * Splits URL segments into ref and path given the refs whose names start with the first
 * segment: the longest ref that is a whole-segment prefix wins, as GitHub's own pages do.
 * Without a match the first segment is the ref (a commit SHA, or a name GitHub will judge).
 */
export function splitRefAndPath(segments: string[], knownRefs: string[]): { ref: string; path: string } {
  let best: string | null = null;
  for (const ref of knownRefs) {
    const parts = ref.split('/');
    if (parts.length > segments.length) continue;
    if (
      parts.every((part, i) => segments[i] === part) &&
      (best === null || parts.length > best.split('/').length)
    ) {
      best = ref;
    }
  }
  const ref = best ?? segments[0] ?? '';
  const used = ref.split('/').length;
  return { ref: checkRef(ref), path: segments.slice(used).join('/') };
}

/** The canonical, commit-pinned way to name a skill folder again later. */
export function formatSource(owner: string, repo: string, ref: string, path: string): string {
  return path === '' ? `${owner}/${repo}@${ref}` : `${owner}/${repo}@${ref}:${path}`;
}

export function isCommitSha(ref: string): boolean {
  return /^[0-9a-f]{40}$/i.test(ref);
}
