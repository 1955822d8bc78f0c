import type * as Yaml from 'yaml';
import { lazyRequire } from '../../../shared/lazy-require.ts';

const loadYaml = lazyRequire<typeof Yaml>('yaml');

/**
 * SKILL.md parsing and the Agent Skills rules (https://agentskills.io/specification): YAML
 * frontmatter between `---` lines, then a Markdown body. Errors make a skill invalid; warnings
 * are advice (the spec's size recommendations, a name that cannot be checked against a folder).
 */

const NAME_MAX = 64;
const DESCRIPTION_MAX = 1024;
const COMPATIBILITY_MAX = 500;
/** The spec recommends a body under 500 lines and about 5,000 tokens. */
const BODY_LINES_RECOMMENDED = 500;
const BODY_TOKENS_RECOMMENDED = 5000;
/**
 * The frontmatter the YAML parser is given at most. The spec's fields fit in a few KiB; the
 * parser checks each key against all before it and expands aliases, so a stranger's 1 MiB
 * of keys or nesting cost it minutes.
 */
const FRONTMATTER_MAX = 16 * 1024;
/** The only keys the specification defines; anything else belongs under `metadata`. */
const KNOWN_KEYS = ['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools'];

export interface Finding {
  level: 'error' | 'warning';
  code: string;
  /** Frontmatter key the finding is about, when there is one. */
  field: string | null;
  message: string;
}

export interface SkillFields {
  name: string | null;
  description: string | null;
  license: string | null;
  compatibility: string | null;
  allowed_tools: string[];
  metadata: Record<string, string>;
}

export interface SkillLint {
  valid: boolean;
  skill: SkillFields;
  /** The frontmatter exactly as YAML gave it (JSON-safe), or null when there is none. */
  frontmatter: Record<string, unknown> | null;
  body: string;
  body_lines: number;
  errors: Finding[];
  warnings: Finding[];
}

const NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

function finding(level: Finding['level'], code: string, field: string | null, message: string): Finding {
  return { level, code, field, message };
}

/** Splits `---\n<yaml>\n---\n<body>`; a BOM and CRLF line ends are accepted, as editors write them. */
function splitFrontmatter(text: string): { yaml: string | null; body: string; yamlStartLine: number } {
  const normalized = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const lines = normalized.split('\n');
  if (lines[0]?.trimEnd() !== '---') return { yaml: null, body: normalized, yamlStartLine: 0 };
  for (let i = 1; i < lines.length; i++) {
    if (lines[i]?.trimEnd() === '---') {
      return {
        yaml: lines.slice(1, i).join('\n'),
        body: lines
          .slice(i + 1)
          .join('\n')
          .replace(/^\n+/, ''),
        yamlStartLine: 2,
      };
    }
  }
  return { yaml: null, body: normalized, yamlStartLine: 0 };
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a mapping' : `a ${typeof value}`;
}

function checkName(value: unknown, folderName: string | null, out: Finding[]): string | null {
  if (value === undefined) {
    out.push(
      finding('error', 'NAME_MISSING', 'name', 'Add `name:` — lowercase letters, digits and hyphens.'),
    );
    return null;
  }
  if (typeof value !== 'string') {
    out.push(
      finding(
        'error',
        'NAME_NOT_STRING',
        'name',
        `name must be a string, got ${describeType(value)}; quote it.`,
      ),
    );
    return null;
  }
  if (value.length === 0) out.push(finding('error', 'NAME_EMPTY', 'name', 'name must not be empty.'));
  else if (value.length > NAME_MAX) {
    out.push(
      finding('error', 'NAME_TOO_LONG', 'name', `name is ${value.length} characters; at most ${NAME_MAX}.`),
    );
  }
  if (value.length > 0 && !NAME_PATTERN.test(value)) {
    let why = 'use only lowercase letters a-z, digits and single hyphens';
    if (/[A-Z]/.test(value)) why = 'it contains uppercase letters; use lowercase';
    else if (value.startsWith('-') || value.endsWith('-')) why = 'it must not start or end with a hyphen';
    else if (value.includes('--')) why = 'it must not contain consecutive hyphens';
    out.push(finding('error', 'NAME_FORMAT', 'name', `name "${value.slice(0, 80)}" is not allowed: ${why}.`));
  }
  if (folderName !== null && value !== folderName) {
    out.push(
      finding(
        'error',
        'NAME_FOLDER_MISMATCH',
        'name',
        `name "${value.slice(0, 80)}" must equal its folder name "${folderName}": rename one of them.`,
      ),
    );
  }
  return value;
}

function checkDescription(value: unknown, out: Finding[]): string | null {
  if (value === undefined) {
    out.push(
      finding(
        'error',
        'DESCRIPTION_MISSING',
        'description',
        'Add `description:` — what the skill does and when to use it.',
      ),
    );
    return null;
  }
  if (typeof value !== 'string') {
    out.push(
      finding(
        'error',
        'DESCRIPTION_NOT_STRING',
        'description',
        `description must be a string, got ${describeType(value)}.`,
      ),
    );
    return null;
  }
  if (value.trim().length === 0) {
    out.push(finding('error', 'DESCRIPTION_EMPTY', 'description', 'description must not be empty.'));
  } else if (value.length > DESCRIPTION_MAX) {
    out.push(
      finding(
        'error',
        'DESCRIPTION_TOO_LONG',
        'description',
        `description is ${value.length} characters; at most ${DESCRIPTION_MAX}.`,
      ),
    );
  }
  return value;
}

function optionalString(key: string, value: unknown, max: number | null, out: Finding[]): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    out.push(
      finding('error', 'FIELD_NOT_STRING', key, `${key} must be a string, got ${describeType(value)}.`),
    );
    return null;
  }
  if (value.trim().length === 0)
    out.push(finding('error', 'FIELD_EMPTY', key, `${key} must not be empty when given.`));
  if (max !== null && value.length > max) {
    out.push(
      finding('error', 'FIELD_TOO_LONG', key, `${key} is ${value.length} characters; at most ${max}.`),
    );
  }
  return value;
}

function checkMetadata(value: unknown, out: Finding[]): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    out.push(
      finding(
        'error',
        'METADATA_NOT_MAP',
        'metadata',
        `metadata must be a mapping of strings, got ${describeType(value)}.`,
      ),
    );
    return {};
  }
  const result: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string') result[key] = item;
    else {
      out.push(
        finding(
          'error',
          'METADATA_VALUE_NOT_STRING',
          'metadata',
          `metadata.${key} must be a string, got ${describeType(item)}; quote it.`,
        ),
      );
    }
  }
  return result;
}

function checkAllowedTools(value: unknown, errors: Finding[], warnings: Finding[]): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
  // Some agents write a YAML list; the spec says space-delimited, so accept and advise.
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
    warnings.push(
      finding(
        'warning',
        'ALLOWED_TOOLS_LIST',
        'allowed-tools',
        'allowed-tools should be one space-delimited string, not a list.',
      ),
    );
    return value as string[];
  }
  errors.push(
    finding(
      'error',
      'FIELD_NOT_STRING',
      'allowed-tools',
      `allowed-tools must be a space-delimited string, got ${describeType(value)}.`,
    ),
  );
  return [];
}

/** Parses the frontmatter YAML into a plain mapping; null (with an error in `errors`) when it is not one. */
function parseFrontmatter(yaml: string, errors: Finding[]): Record<string, unknown> | null {
  const { isMap, isScalar, parseDocument } = loadYaml();
  // Aliases are capped so a "billion laughs" document cannot expand without bound.
  const doc = parseDocument(yaml, { uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    const line = first?.linePos?.[0]?.line;
    errors.push(
      finding(
        'error',
        'FRONTMATTER_YAML',
        null,
        `The frontmatter is not valid YAML${line === undefined ? '' : ` (line ${line + 1} of the file)`}: ${first?.message.split('\n')[0] ?? 'parse error'}. Quote values that contain ": " or start with a special character.`,
      ),
    );
    return null;
  }
  if (!isMap(doc.contents)) {
    errors.push(
      finding(
        'error',
        'FRONTMATTER_NOT_MAP',
        null,
        `The frontmatter must be a YAML mapping of keys, got ${isScalar(doc.contents) || doc.contents === null ? 'a single value' : 'a list'}.`,
      ),
    );
    return null;
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 50 });
  } catch (error) {
    errors.push(
      finding(
        'error',
        'FRONTMATTER_YAML',
        null,
        `The frontmatter cannot be read: ${(error as Error).message}.`,
      ),
    );
  }
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** Checks each frontmatter key against the specification and fills `skill` with the usable values. */
function checkFields(
  fm: Record<string, unknown>,
  folderName: string | null,
  skill: SkillFields,
  errors: Finding[],
  warnings: Finding[],
): void {
  skill.name = checkName(fm.name, folderName, errors);
  skill.description = checkDescription(fm.description, errors);
  skill.license = optionalString('license', fm.license, null, errors);
  skill.compatibility = optionalString('compatibility', fm.compatibility, COMPATIBILITY_MAX, errors);
  skill.metadata = checkMetadata(fm.metadata, errors);
  skill.allowed_tools = checkAllowedTools(fm['allowed-tools'], errors, warnings);
  for (const key of Object.keys(fm)) {
    if (!KNOWN_KEYS.includes(key)) {
      errors.push(
        finding(
          'error',
          'UNKNOWN_KEY',
          key,
          `"${key.slice(0, 60)}" is not an Agent Skills frontmatter key (${KNOWN_KEYS.join(', ')}); move it under metadata.`,
        ),
      );
    }
  }
}

/** Warns about an empty body or one over the spec's size advice; returns its line count. */
function checkBody(body: string, warnings: Finding[]): number {
  const bodyLines = body.length === 0 ? 0 : body.split('\n').length;
  if (body.trim().length === 0) {
    warnings.push(
      finding('warning', 'BODY_EMPTY', null, 'The body is empty: add the instructions an agent follows.'),
    );
  }
  if (bodyLines > BODY_LINES_RECOMMENDED) {
    warnings.push(
      finding(
        'warning',
        'BODY_LONG',
        null,
        `The body has ${bodyLines} lines; keep it under ${BODY_LINES_RECOMMENDED} and move detail to references/.`,
      ),
    );
  }
  // About four characters per token: a rough count, enough to flag a body far over the advice.
  const approxTokens = Math.ceil(body.length / 4);
  if (approxTokens > BODY_TOKENS_RECOMMENDED) {
    warnings.push(
      finding(
        'warning',
        'BODY_TOKENS',
        null,
        `The body is about ${approxTokens} tokens; the advice is under ${BODY_TOKENS_RECOMMENDED}. Move detail to references/.`,
      ),
    );
  }
  return bodyLines;
}

/**
 * Lints one SKILL.md. `folderName` is the skill's directory (the spec requires `name` to equal
 * it); null when unknown, e.g. text pasted without a source.
 */
export function lintSkillMarkdown(text: string, folderName: string | null = null): SkillLint {
  const errors: Finding[] = [];
  const warnings: Finding[] = [];
  const { yaml, body } = splitFrontmatter(text);
  const skill: SkillFields = {
    name: null,
    description: null,
    license: null,
    compatibility: null,
    allowed_tools: [],
    metadata: {},
  };
  let frontmatter: Record<string, unknown> | null = null;

  if (yaml === null) {
    errors.push(
      finding(
        'error',
        'FRONTMATTER_MISSING',
        null,
        'SKILL.md must start with YAML frontmatter: a `---` line, `name:` and `description:`, then a closing `---` line.',
      ),
    );
  } else if (yaml.length > FRONTMATTER_MAX) {
    errors.push(
      finding(
        'error',
        'FRONTMATTER_TOO_LARGE',
        null,
        `The frontmatter is ${yaml.length} characters; at most ${FRONTMATTER_MAX} are read. Keep name, description and a few short fields there and move the rest to the body or references/.`,
      ),
    );
  } else {
    const fm = parseFrontmatter(yaml, errors);
    if (fm) {
      frontmatter = JSON.parse(JSON.stringify(fm)) as Record<string, unknown>;
      checkFields(fm, folderName, skill, errors, warnings);
    }
  }

  const bodyLines = checkBody(body, warnings);
  return { valid: errors.length === 0, skill, frontmatter, body, body_lines: bodyLines, errors, warnings };
}
