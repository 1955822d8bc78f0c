import { z } from 'zod';
import type { GitHubClient, TreeEntry } from './github.ts';
import { sha256 } from './github.ts';
import type { ResolvedSkill } from './resolve.ts';
import { isSafeRelativePath } from './source.ts';

/** Files above this size are listed (size, git SHA) but never fetched. */
export const MAX_FILE_BYTES = 1024 * 1024;
const FETCH_CONCURRENCY = 6;

/** Git's mode for a symbolic link: its blob is the target path, not content. */
export const SYMLINK_MODE = '120000';

/**
 * Why a tree entry must not be handed over as a file to write, or null. A link's target would
 * arrive as text an agent writes as an ordinary file, or recreates as a link out of the folder;
 * an unsafe name would be written outside the folder. Neither is fetched.
 */
export function undeliverable(entry: TreeEntry): string | null {
  if (entry.mode === SYMLINK_MODE) {
    return 'symbolic link (git mode 120000): not delivered as a file and its target is not followed';
  }
  if (!isSafeRelativePath(entry.path)) {
    return 'unsafe file name (a "..", "\\", ":", control character, trailing dot or space, or Windows device name would place it outside the skill folder or on a device on some systems): not delivered';
  }
  return null;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function isText(bytes: Buffer): boolean {
  if (bytes.subarray(0, 8192).includes(0)) return false;
  try {
    utf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The largest prefix of at most `max` bytes that does not split a UTF-8 character. */
function utf8SafeCut(bytes: Buffer, max: number): number {
  if (bytes.length <= max) return bytes.length;
  let cut = max;
  // Step back over continuation bytes (10xxxxxx) to the start of the character that was split.
  while (cut > 0 && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut--;
  return cut;
}

export const fileResult = z.object({
  path: z.string().describe('Path relative to the skill folder.'),
  size: z.number().int().describe('Size in bytes from the commit tree.'),
  git_sha: z
    .string()
    .describe('Git blob SHA from the commit tree; the fetched bytes were checked against it.'),
  sha256: z.string().nullable().describe('SHA-256 of the whole file, when it was fetched.'),
  executable: z.boolean(),
  encoding: z.enum(['utf-8', 'base64']).nullable(),
  content: z.string().nullable().describe('Untrusted file content; null when not included (see omitted).'),
  clipped: z.boolean().describe('content holds only the first part of the file.'),
  omitted: z.string().nullable().describe('Why content is missing, when it is.'),
});
export type FileResult = z.output<typeof fileResult>;

export interface ContentBudget {
  /** Bytes of content still allowed in this result. */
  remaining: number;
  /** Largest content for one file. */
  perFile: number;
}

/**
 * Shapes one fetched file: text as UTF-8 (clipped at a character boundary), binary as base64
 * (whole or not at all: half a PNG is no use to anyone).
 */
/** What a listing says of a file whatever is delivered of it: skills_get's files are this alone. */
export function describeFile(
  entry: TreeEntry,
  bytes: Buffer | null,
): Pick<FileResult, 'path' | 'size' | 'git_sha' | 'sha256' | 'executable'> {
  return {
    path: entry.path,
    size: entry.size ?? bytes?.length ?? 0,
    git_sha: entry.sha,
    sha256: bytes ? sha256(bytes) : null,
    executable: entry.mode === '100755',
  };
}

export function encodeFile(
  entry: TreeEntry,
  bytes: Buffer | null,
  budget: ContentBudget | null,
  why: string | null,
): FileResult {
  const base = describeFile(entry, bytes);
  if (!bytes || budget === null) {
    return { ...base, encoding: null, content: null, clipped: false, omitted: why ?? 'listed only' };
  }
  const allowed = Math.min(budget.perFile, budget.remaining);
  if (isText(bytes)) {
    const cut = utf8SafeCut(bytes, allowed);
    if (cut === 0 && bytes.length > 0) {
      return {
        ...base,
        encoding: null,
        content: null,
        clipped: false,
        omitted: 'byte budget of this call spent',
      };
    }
    budget.remaining -= cut;
    return {
      ...base,
      encoding: 'utf-8',
      content: bytes.subarray(0, cut).toString('utf8'),
      clipped: cut < bytes.length,
      omitted: null,
    };
  }
  if (bytes.length > allowed) {
    return {
      ...base,
      encoding: null,
      content: null,
      clipped: false,
      omitted: `binary file of ${bytes.length} bytes exceeds the ${allowed} bytes left in this call`,
    };
  }
  budget.remaining -= bytes.length;
  return { ...base, encoding: 'base64', content: bytes.toString('base64'), clipped: false, omitted: null };
}

/**
 * Fetches files of a resolved skill (a few at a time), skipping those over MAX_FILE_BYTES;
 * links and unsafe names get their reason as an Error, without a fetch.
 */
export async function fetchFiles(
  github: GitHubClient,
  skill: ResolvedSkill,
  entries: TreeEntry[],
  signal: AbortSignal,
): Promise<Map<string, Buffer | Error>> {
  const results = new Map<string, Buffer | Error>();
  const queue: TreeEntry[] = [];
  for (const entry of entries) {
    const refused = undeliverable(entry);
    if (refused) results.set(entry.path, new Error(refused));
    else if ((entry.size ?? 0) <= MAX_FILE_BYTES) queue.push(entry);
  }
  async function worker() {
    for (let entry = queue.shift(); entry; entry = queue.shift()) {
      const full = skill.folder === '' ? entry.path : `${skill.folder}/${entry.path}`;
      try {
        results.set(
          entry.path,
          await github.raw(skill.owner, skill.repo, skill.commit.sha, full, entry.sha, signal),
        );
      } catch (error) {
        if (signal.aborted) throw error;
        results.set(entry.path, error as Error);
      }
    }
  }
  await Promise.all(Array.from({ length: FETCH_CONCURRENCY }, worker));
  return results;
}
