import { UpstreamError } from '../../upstream/errors.ts';
import { NAMES_UNTRUSTED } from './descriptions.ts';
import type { Commit, GitHubClient, TreeEntry } from './github.ts';
import { isCommitSha, normalizePath, parseSource, splitRefAndPath } from './source.ts';

/** A skill folder pinned to one commit, with its file listing from the commit's tree. */
export interface ResolvedSkill {
  owner: string;
  repo: string;
  /** The ref the caller named, or the default branch. */
  ref: string;
  commit: Commit;
  /** Folder holding SKILL.md; '' is the repository root. */
  folder: string;
  /** When the source named a file inside the folder, its path relative to the folder. */
  file: string | null;
  /** Blobs under the folder, paths relative to it, sorted with SKILL.md first. */
  files: TreeEntry[];
  /** GitHub could not list everything at once; some files may be missing from `files`. */
  listingTruncated: boolean;
  license: string | null;
}

const SKILL_FILE = 'SKILL.md';

function parentOf(path: string): string {
  return path.split('/').slice(0, -1).join('/');
}

function skillFolders(all: TreeEntry[]): string[] {
  return all
    .filter(
      (entry) =>
        entry.type === 'blob' && (entry.path === SKILL_FILE || entry.path.endsWith(`/${SKILL_FILE}`)),
    )
    .map((entry) => parentOf(entry.path));
}

function sortFiles(entries: TreeEntry[]): TreeEntry[] {
  return entries
    .filter((entry) => entry.type === 'blob')
    .sort((a, b) => (a.path === SKILL_FILE ? -1 : b.path === SKILL_FILE ? 1 : a.path.localeCompare(b.path)));
}

/**
 * Source → commit → folder. A branch named in a URL may contain `/`, so the repository's refs
 * starting with the first segment are asked for and the longest match wins. Whether the path is
 * a file or a folder is read from the tree, never guessed from a dot in the name.
 */
export async function resolveSkill(
  github: GitHubClient,
  sourceText: string,
  skillName: string | undefined,
  signal: AbortSignal,
): Promise<ResolvedSkill> {
  const source = parseSource(sourceText);
  const { owner, repo } = source;
  const info = await github.repo(owner, repo, signal);
  let ref = source.ref ?? info.defaultBranch;
  let path = source.path;
  if (source.refAndPath) {
    const [first = ''] = source.refAndPath;
    const known = isCommitSha(first) ? [] : await github.refsStartingWith(owner, repo, first, signal);
    ({ ref, path } = splitRefAndPath(source.refAndPath, known));
    path = normalizePath(path);
  }
  const commit = await github.commit(owner, repo, ref, signal);
  let listing = await github.listPath(owner, repo, commit, path, signal);
  if (listing.kind === null) {
    throw new UpstreamError(
      'NOT_FOUND',
      `Nothing at "${path}" in ${owner}/${repo} at ${ref} (commit ${commit.sha.slice(0, 12)}). Check the path; skills_search gives exact sources.`,
    );
  }
  let folder = path;
  let file: string | null = null;
  if (listing.kind === 'blob') {
    folder = parentOf(path);
    file = path.slice(folder === '' ? 0 : folder.length + 1);
    listing = await github.listPath(owner, repo, commit, folder, signal);
  }
  if (!listing.entries.some((entry) => entry.path === SKILL_FILE && entry.type === 'blob')) {
    const found = skillFolders(
      listing.all.length > 0
        ? listing.all
        : listing.entries.map((e) => ({ ...e, path: folder ? `${folder}/${e.path}` : e.path })),
    );
    const under = found.filter((candidate) => folder === '' || candidate.startsWith(`${folder}/`));
    const named = skillName ? under.filter((candidate) => candidate.split('/').pop() === skillName) : [];
    if (named.length === 1 && named[0] !== undefined) {
      folder = named[0];
      file = null;
      listing = await github.listPath(owner, repo, commit, folder, signal);
    } else {
      const hint = under.length
        ? ` Skill folders there (${NAMES_UNTRUSTED}): ${under.slice(0, 20).join(', ')}${under.length > 20 ? ', …' : ''}${skillName ? '' : ' — pass one as the path, or give skill=<name>'}.`
        : ' No SKILL.md anywhere below it.';
      throw new UpstreamError(
        'NOT_FOUND',
        `No ${SKILL_FILE} in "${folder || '/'}" of ${owner}/${repo} at ${ref} (commit ${commit.sha.slice(0, 12)}).${skillName && named.length > 1 ? ` Several folders are named "${skillName}"; give the full path.` : ''}${hint}`,
      );
    }
  }
  return {
    owner,
    repo,
    ref,
    commit,
    folder,
    file,
    files: sortFiles(listing.entries),
    listingTruncated: listing.truncated,
    license: info.license,
  };
}
