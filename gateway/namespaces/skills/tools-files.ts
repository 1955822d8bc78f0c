import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { ANNOTATIONS } from '../../upstream/namespace-kit.ts';
import { TtlCache } from './cache.ts';
import {
  describeFile,
  encodeFile,
  type FileResult,
  fetchFiles,
  fileResult,
  MAX_FILE_BYTES,
  undeliverable,
} from './content.ts';
import { NAMES_UNTRUSTED, UNTRUSTED_SKILLS } from './descriptions.ts';
import type { GitHubClient } from './github.ts';
import { type ResolvedSkill, resolveSkill } from './resolve.ts';
import { lintSkillMarkdown, type SkillLint } from './skill-md.ts';
import { formatSource, normalizePath } from './source.ts';
import { type SafetyWarning, safetyWarnings } from './warnings.ts';

const sourceInput = z
  .string()
  .min(1)
  .max(600)
  .describe('GitHub URL, owner/repo[/path] or owner/repo@ref:path (ref may contain "/").');
const skillInput = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,63}$/)
  .optional()
  .describe('Skill folder name, when the source names a repository or folder holding several skills.');

const provenance = z.object({
  owner: z.string(),
  repo: z.string(),
  ref: z.string().describe('The ref asked for (or the default branch).'),
  commit: z.string().describe('Commit SHA every file was read at.'),
  path: z.string().describe('Skill folder inside the repository; "" is the root.'),
  source: z.string().describe('Commit-pinned source to pass back to skills_* tools.'),
  url: z.string().describe('Web page of the folder at that commit.'),
  license: z
    .string()
    .nullable()
    .describe('SPDX id from the frontmatter, else from the repository; null when unknown.'),
});

const finding = z.object({
  level: z.enum(['error', 'warning']),
  code: z.string(),
  field: z.string().nullable(),
  message: z.string(),
});
const warning = z.object({ code: z.string(), message: z.string(), examples: z.array(z.string()) });

function provenanceOf(skill: ResolvedSkill, frontmatterLicense: string | null) {
  const web = `https://github.com/${skill.owner}/${skill.repo}/tree/${skill.commit.sha}${skill.folder ? `/${skill.folder}` : ''}`;
  return {
    owner: skill.owner,
    repo: skill.repo,
    ref: skill.ref,
    commit: skill.commit.sha,
    path: skill.folder,
    source: formatSource(skill.owner, skill.repo, skill.commit.sha, skill.folder),
    url: web,
    license: frontmatterLicense ?? skill.license,
  };
}

function fullPath(skill: ResolvedSkill, path: string): string {
  return skill.folder === '' ? path : `${skill.folder}/${path}`;
}

/**
 * SKILL.md checks by blob SHA and the folder name checked against: a blob's bytes never
 * change, and parsing and checking them was a quarter of a repeated skills_get's CPU
 * (decision 0146). Callers read the result and never change it.
 */
const LINTS = new TtlCache<SkillLint>(1024);
const LINT_TTL_MS = 10 * 60_000;

function lintOf(blobSha: string, text: string, folderName: string | null): SkillLint {
  const key = `${blobSha} ${folderName ?? ''}`;
  let lint = LINTS.get(key);
  if (!lint) {
    lint = lintSkillMarkdown(text, folderName);
    LINTS.set(key, lint, LINT_TTL_MS);
  }
  return lint;
}

/**
 * Safety warnings by commit and folder, which fix both what they read (SKILL.md and the
 * folder's listing): on a repeated skills_get they were the largest part left after the
 * checks were kept (decision 0147). Callers read the result and never change it.
 */
const WARNINGS = new TtlCache<SafetyWarning[]>(1024);

function warningsOf(skill: ResolvedSkill, lint: SkillLint): SafetyWarning[] {
  const key = `${skill.commit.sha} ${skill.folder}`;
  let warnings = WARNINGS.get(key);
  if (!warnings) {
    warnings = safetyWarnings(lint.body, lint.skill.allowed_tools, skill.files);
    WARNINGS.set(key, warnings, LINT_TTL_MS);
  }
  return warnings;
}

async function readSkillMd(github: GitHubClient, skill: ResolvedSkill, signal: AbortSignal): Promise<string> {
  const entry = skill.files[0];
  if (entry?.path !== 'SKILL.md') throw new UpstreamError('NOT_FOUND', 'The folder has no SKILL.md.');
  if ((entry.size ?? 0) > MAX_FILE_BYTES) {
    throw new UpstreamError(
      'UPSTREAM_ERROR',
      `SKILL.md is ${entry.size} bytes, over the ${MAX_FILE_BYTES}-byte limit; it was not read.`,
    );
  }
  const bytes = await github.raw(
    skill.owner,
    skill.repo,
    skill.commit.sha,
    fullPath(skill, 'SKILL.md'),
    entry.sha,
    signal,
  );
  return bytes.toString('utf8');
}

const BODY_MAX_BYTES = 128 * 1024;
const LIST_MAX = 1000;
const DIGEST_FILES_MAX = 50;
const DIGEST_BYTES_MAX = 2 * 1024 * 1024;

export function createFileTools(getGitHub: () => GitHubClient): ToolDefinition[] {
  return [getTool(getGitHub), readFileTool(getGitHub), downloadTool(getGitHub)];
}

const getInput = z.object({ source: sourceInput, skill: skillInput });

const getOutput = z.object({
  provenance,
  skill: z.object({
    name: z.string().nullable(),
    description: z.string().nullable(),
    license: z.string().nullable(),
    compatibility: z.string().nullable(),
    allowed_tools: z.array(z.string()),
    metadata: z.record(z.string(), z.string()),
  }),
  frontmatter: z.record(z.string(), z.unknown()).nullable(),
  body: z.string().describe('Untrusted instructions from SKILL.md.'),
  body_truncated: z.boolean(),
  valid: z.boolean(),
  errors: z.array(finding),
  validation_warnings: z.array(finding),
  warnings: z.array(warning).describe('Safety signals: what the skill would have an agent run.'),
  files: z.array(fileResult.omit({ encoding: true, content: true, clipped: true })),
  files_truncated: z.boolean().describe('The folder has more files than listed here.'),
  untrusted: z.string(),
});

function getTool(getGitHub: () => GitHubClient): ToolDefinition {
  return defineTool({
    name: 'skills_get',
    title: 'Get a skill (commit-pinned, validated)',
    description: `Resolves a skill source to a commit SHA, reads its SKILL.md, validates it against the Agent Skills rules, and returns frontmatter, body, the folder's files (size, git SHA, SHA-256), commit, URL, licence and safety warnings (scripts, allowed-tools, shell snippets). Read-only; never runs anything. ${UNTRUSTED_SKILLS}`,
    input: getInput,
    output: getOutput,
    annotations: ANNOTATIONS.read,
    async handler({ source, skill: skillName }, { signal }) {
      const github = getGitHub();
      const skill = await resolveSkill(github, source, skillName, signal);
      const text = await readSkillMd(github, skill, signal);
      const lint = lintOf(
        skill.files[0]!.sha,
        text,
        skill.folder === '' ? skill.repo : (skill.folder.split('/').pop() ?? null),
      );
      let { errors, warnings, valid } = lint;
      if (skill.folder === '') {
        // A skill at the repository root has no folder of its own until installed.
        const moved = errors.filter((f) => f.code === 'NAME_FOLDER_MISMATCH');
        errors = errors.filter((f) => f.code !== 'NAME_FOLDER_MISMATCH');
        warnings = [...warnings, ...moved.map((f) => ({ ...f, level: 'warning' as const }))];
        valid = errors.length === 0;
      }
      const listed = skill.files.slice(0, LIST_MAX);
      // Digests for the first files, within a budget: the raw host spends no API quota, but
      // a get should not turn into a download of a large folder.
      let digestBytes = 0;
      const forDigest = listed
        .filter((entry) => (entry.size ?? 0) <= MAX_FILE_BYTES)
        .filter((entry) => {
          digestBytes += entry.size ?? 0;
          return digestBytes <= DIGEST_BYTES_MAX;
        })
        .slice(0, DIGEST_FILES_MAX);
      const fetched = await fetchFiles(github, skill, forDigest, signal);
      const files = listed.map((entry) => {
        const got = fetched.get(entry.path);
        const bytes = got instanceof Buffer ? got : null;
        const why =
          got instanceof Error
            ? got.message
            : (entry.size ?? 0) > MAX_FILE_BYTES
              ? `over ${MAX_FILE_BYTES} bytes`
              : 'not read by skills_get (digest budget); skills_read_file or skills_download give it';
        return { ...describeFile(entry, bytes), omitted: bytes ? null : why };
      });
      const bodyBytes = Buffer.from(lint.body, 'utf8');
      const bodyTruncated = bodyBytes.length > BODY_MAX_BYTES;
      return {
        provenance: provenanceOf(skill, lint.skill.license),
        skill: lint.skill,
        frontmatter: lint.frontmatter,
        body: bodyTruncated
          ? bodyBytes
              .subarray(0, BODY_MAX_BYTES)
              .toString('utf8')
              .replace(/\uFFFD$/, '')
          : lint.body,
        body_truncated: bodyTruncated,
        valid,
        errors,
        validation_warnings: warnings,
        warnings: warningsOf(skill, lint),
        files,
        files_truncated: skill.listingTruncated || skill.files.length > listed.length,
        untrusted: UNTRUSTED_SKILLS,
      };
    },
  });
}

function readFileTool(getGitHub: () => GitHubClient): ToolDefinition {
  return defineTool({
    name: 'skills_read_file',
    title: 'Read one file of a skill',
    description: `Reads one file of a skill folder at a pinned commit: text as UTF-8, binary as base64, with its SHA-256 and git SHA. Text longer than max_bytes is clipped at a character boundary (clipped=true). ${UNTRUSTED_SKILLS}`,
    input: z.object({
      source: sourceInput,
      path: z
        .string()
        .min(1)
        .max(400)
        .describe('File path relative to the skill folder, e.g. references/forms.md.'),
      skill: skillInput,
      max_bytes: z
        .number()
        .int()
        .min(1)
        .max(MAX_FILE_BYTES)
        .default(256 * 1024),
    }),
    output: z.object({ provenance, file: fileResult, untrusted: z.string() }),
    annotations: ANNOTATIONS.read,
    async handler({ source, path, skill: skillName, max_bytes }, { signal }) {
      const github = getGitHub();
      const skill = await resolveSkill(github, source, skillName, signal);
      const wanted = normalizePath(path, 'path');
      const entry = skill.files.find((file) => file.path === wanted);
      if (!entry) {
        const some = skill.files.slice(0, 30).map((file) => file.path);
        throw new UpstreamError(
          'NOT_FOUND',
          `No file "${wanted}" in the skill folder at commit ${skill.commit.sha.slice(0, 12)}. Files (${NAMES_UNTRUSTED}): ${some.join(', ')}${skill.files.length > 30 ? ', …' : ''}.`,
        );
      }
      const refused =
        undeliverable(entry) ??
        ((entry.size ?? 0) > MAX_FILE_BYTES
          ? `over ${MAX_FILE_BYTES} bytes: not read; fetch it from the URL if you must`
          : null);
      if (refused) {
        return {
          provenance: provenanceOf(skill, null),
          file: encodeFile(entry, null, null, refused),
          untrusted: UNTRUSTED_SKILLS,
        };
      }
      const bytes = await github.raw(
        skill.owner,
        skill.repo,
        skill.commit.sha,
        fullPath(skill, entry.path),
        entry.sha,
        signal,
      );
      return {
        provenance: provenanceOf(skill, null),
        file: encodeFile(entry, bytes, { remaining: max_bytes, perFile: max_bytes }, null),
        untrusted: UNTRUSTED_SKILLS,
      };
    },
  });
}

function downloadTool(getGitHub: () => GitHubClient): ToolDefinition {
  return defineTool({
    name: 'skills_download',
    title: 'Download a skill folder',
    description: `Downloads a whole skill folder at a pinned commit: every file with SHA-256 and git SHA, text as UTF-8, binary as base64. Caps: max_files and max_bytes (content bytes in this result); truncated=true when anything was left out, and each omitted file says why. Never runs anything. ${UNTRUSTED_SKILLS}`,
    input: z.object({
      source: sourceInput,
      skill: skillInput,
      max_files: z.number().int().min(1).max(100).default(50),
      max_bytes: z
        .number()
        .int()
        .min(1024)
        .max(2 * 1024 * 1024)
        .default(512 * 1024),
    }),
    output: z.object({
      provenance,
      name: z.string(),
      files: z.array(fileResult),
      file_count: z.number().int().describe('Files in the folder (as far as GitHub listed it).'),
      total_bytes: z.number().int().describe('Content bytes included in this result.'),
      truncated: z.boolean(),
      untrusted: z.string(),
    }),
    annotations: ANNOTATIONS.read,
    async handler({ source, skill: skillName, max_files, max_bytes }, { signal }) {
      const github = getGitHub();
      const skill = await resolveSkill(github, source, skillName, signal);
      const chosen = skill.files.slice(0, max_files);
      const fetched = await fetchFiles(github, skill, chosen, signal);
      const budget = { remaining: max_bytes, perFile: Math.min(max_bytes, MAX_FILE_BYTES) };
      const files: FileResult[] = chosen.map((entry) => {
        const got = fetched.get(entry.path);
        if (got instanceof Buffer) return encodeFile(entry, got, budget, null);
        const why = got instanceof Error ? got.message : `over ${MAX_FILE_BYTES} bytes: not read`;
        return encodeFile(entry, null, null, why);
      });
      const truncated =
        skill.listingTruncated ||
        skill.files.length > chosen.length ||
        files.some((file) => file.clipped || file.omitted !== null);
      return {
        provenance: provenanceOf(skill, null),
        name: skill.folder.split('/').pop() || skill.repo,
        files,
        file_count: skill.files.length,
        total_bytes: max_bytes - budget.remaining,
        truncated,
        untrusted: UNTRUSTED_SKILLS,
      };
    },
  });
}
