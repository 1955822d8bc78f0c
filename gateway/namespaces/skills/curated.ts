/**
 * A small, hand-kept index of well-known public skill folders, so `skills_search` answers with
 * nothing configured and no network. Entries are pointers, not content: the files are always
 * read from GitHub (commit-pinned, validated) by skills_get, which is also how an entry that
 * moved upstream shows up — as NOT_FOUND, never as stale text.
 */
export interface CuratedSkill {
  name: string;
  description: string;
  owner: string;
  repo: string;
  path: string;
  ref: string;
  /** SPDX id when the repository states one for this folder; null when it must be checked. */
  license: string | null;
  tags: string[];
}

/** Skills kept as skills/<name> on the main branch of one repository, under one licence unless said otherwise. */
function skillsIn(owner: string, repo: string, repoLicense: string | null) {
  return (name: string, description: string, tags: string[], license = repoLicense): CuratedSkill => ({
    name,
    description,
    owner,
    repo,
    path: `skills/${name}`,
    ref: 'main',
    license,
    tags,
  });
}

const anthropic = skillsIn('anthropics', 'skills', 'Apache-2.0');
const superpowers = skillsIn('obra', 'superpowers', 'MIT');

export const CURATED_SKILLS: readonly CuratedSkill[] = [
  // The document skills are source-available under their own terms, not Apache-2.0: licence left
  // null so the caller checks the folder's LICENSE file.
  anthropic(
    'pdf',
    'Read, fill, merge, split and create PDF documents; extract text and tables.',
    ['pdf', 'documents', 'forms'],
    null,
  ),
  anthropic(
    'docx',
    'Create and edit Word documents with tracked changes, comments and formatting.',
    ['word', 'docx', 'documents'],
    null,
  ),
  anthropic(
    'xlsx',
    'Create and analyse spreadsheets with formulas, formatting and charts.',
    ['excel', 'spreadsheet', 'xlsx', 'data'],
    null,
  ),
  anthropic(
    'pptx',
    'Create and edit PowerPoint presentations, layouts and speaker notes.',
    ['powerpoint', 'slides', 'presentation'],
    null,
  ),
  anthropic('skill-creator', 'Guide for writing a new Agent Skill: structure, frontmatter and packaging.', [
    'skills',
    'authoring',
    'meta',
  ]),
  anthropic('mcp-builder', 'Guide for building Model Context Protocol servers that expose tools to agents.', [
    'mcp',
    'server',
    'tools',
    'api',
  ]),
  anthropic(
    'webapp-testing',
    'Test local web applications with Playwright: screenshots, logs and interactions.',
    ['testing', 'playwright', 'browser', 'web'],
  ),
  anthropic('frontend-design', 'Design distinctive, production-grade web front ends and components.', [
    'frontend',
    'ui',
    'design',
    'css',
    'react',
  ]),
  anthropic(
    'web-artifacts-builder',
    'Build multi-component HTML artifacts with React, Tailwind and shadcn/ui.',
    ['react', 'html', 'tailwind', 'artifacts'],
  ),
  anthropic('canvas-design', 'Create posters and visual art as PNG or PDF from a design philosophy.', [
    'design',
    'poster',
    'art',
    'image',
  ]),
  anthropic('algorithmic-art', 'Generative art with p5.js: seeded randomness, flow fields, particles.', [
    'art',
    'p5js',
    'generative',
  ]),
  anthropic(
    'brand-guidelines',
    "Apply a company's brand colours and typography to documents and artifacts.",
    ['brand', 'style', 'design'],
  ),
  anthropic(
    'theme-factory',
    'Apply one of several ready-made visual themes to slides, documents and pages.',
    ['theme', 'style', 'design'],
  ),
  anthropic('internal-comms', 'Write internal communications: status reports, updates, newsletters, FAQs.', [
    'writing',
    'communication',
    'reports',
  ]),
  anthropic('slack-gif-creator', 'Create animated GIFs sized and optimised for Slack.', [
    'gif',
    'slack',
    'animation',
  ]),
  anthropic('doc-coauthoring', 'Co-author documents with the user through a structured drafting workflow.', [
    'writing',
    'documents',
    'collaboration',
  ]),
  superpowers('test-driven-development', 'Write the failing test first, then the code, then refactor.', [
    'testing',
    'tdd',
    'development',
  ]),
  superpowers('systematic-debugging', 'Find root causes methodically before proposing a fix.', [
    'debugging',
    'bugs',
    'development',
  ]),
  superpowers('brainstorming', 'Refine a rough idea into a design through questions before coding.', [
    'design',
    'planning',
    'ideas',
  ]),
  superpowers('writing-plans', 'Write detailed implementation plans with small, verifiable steps.', [
    'planning',
    'development',
  ]),
  superpowers(
    'verification-before-completion',
    'Run the checks and show evidence before claiming work is done.',
    ['testing', 'verification', 'quality'],
  ),
];

function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

/** Word-overlap score: the name counts most, then tags, then the description. */
function scoreCurated(skill: CuratedSkill, query: string): number {
  const terms = words(query);
  if (terms.length === 0) return 0;
  const nameWords = new Set(words(skill.name));
  const tagWords = new Set(skill.tags.flatMap(words));
  const descriptionWords = new Set(words(skill.description));
  let score = 0;
  for (const term of terms) {
    if (nameWords.has(term)) score += 3;
    else if (skill.name.includes(term) && term.length >= 3) score += 2;
    if (tagWords.has(term)) score += 2;
    if (descriptionWords.has(term)) score += 1;
  }
  return score / terms.length;
}

export function searchCurated(query: string, limit: number): Array<{ skill: CuratedSkill; score: number }> {
  return CURATED_SKILLS.map((skill) => ({ skill, score: scoreCurated(skill, query) }))
    .filter((hit) => hit.score > 0)
    .sort((a, b) => b.score - a.score || a.skill.name.localeCompare(b.skill.name))
    .slice(0, limit);
}
