/** The Agent Skills rules as a table: each row is a SKILL.md and the findings it must produce. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lintSkillMarkdown } from '../../gateway/namespaces/skills/skill-md.ts';

const ok = (extra = '', body = '# Use\nDo the thing.\n') =>
  `---\nname: pdf-tools\ndescription: Work with PDF files when the user asks.\n${extra}---\n${body}`;

interface Row {
  title: string;
  text: string;
  folder?: string | null;
  errors: string[];
  warnings?: string[];
}

const rows: Row[] = [
  { title: 'minimal valid skill', text: ok(), folder: 'pdf-tools', errors: [] },
  {
    title: 'all optional keys',
    text: ok(
      'license: MIT\ncompatibility: Needs python3 and network access\nmetadata:\n  author: someone\n  version: "1.0"\nallowed-tools: Bash(git:*) Read\n',
    ),
    errors: [],
  },
  { title: 'CRLF line ends', text: ok().replace(/\n/g, '\r\n'), folder: 'pdf-tools', errors: [] },
  { title: 'byte-order mark', text: `\uFEFF${ok()}`, errors: [] },
  { title: 'no frontmatter', text: '# Just markdown\n', errors: ['FRONTMATTER_MISSING'] },
  {
    title: 'unclosed frontmatter',
    text: '---\nname: a\ndescription: b\n# body',
    errors: ['FRONTMATTER_MISSING'],
  },
  {
    title: 'invalid YAML',
    text: '---\nname: a\ndescription: x: y: [\n---\nbody',
    errors: ['FRONTMATTER_YAML'],
  },
  {
    title: 'duplicate key',
    text: '---\nname: a\nname: b\ndescription: d\n---\nbody',
    errors: ['FRONTMATTER_YAML'],
  },
  { title: 'frontmatter is a list', text: '---\n- a\n- b\n---\nbody', errors: ['FRONTMATTER_NOT_MAP'] },
  { title: 'missing name', text: '---\ndescription: d\n---\nbody', errors: ['NAME_MISSING'] },
  { title: 'missing description', text: '---\nname: abc\n---\nbody', errors: ['DESCRIPTION_MISSING'] },
  {
    title: 'uppercase name',
    text: '---\nname: PDF-Tools\ndescription: d\n---\nbody',
    errors: ['NAME_FORMAT'],
  },
  { title: 'leading hyphen', text: '---\nname: -pdf\ndescription: d\n---\nbody', errors: ['NAME_FORMAT'] },
  { title: 'trailing hyphen', text: '---\nname: pdf-\ndescription: d\n---\nbody', errors: ['NAME_FORMAT'] },
  {
    title: 'double hyphen',
    text: '---\nname: pdf--tools\ndescription: d\n---\nbody',
    errors: ['NAME_FORMAT'],
  },
  { title: 'underscore', text: '---\nname: pdf_tools\ndescription: d\n---\nbody', errors: ['NAME_FORMAT'] },
  {
    title: 'name of 64 characters',
    text: `---\nname: ${'a'.repeat(64)}\ndescription: d\n---\nbody`,
    errors: [],
  },
  {
    title: 'name of 65 characters',
    text: `---\nname: ${'a'.repeat(65)}\ndescription: d\n---\nbody`,
    errors: ['NAME_TOO_LONG'],
  },
  { title: 'numeric name', text: '---\nname: 123\ndescription: d\n---\nbody', errors: ['NAME_NOT_STRING'] },
  { title: 'name differs from folder', text: ok(), folder: 'pdf', errors: ['NAME_FOLDER_MISMATCH'] },
  {
    title: 'empty description',
    text: '---\nname: a\ndescription: "   "\n---\nbody',
    errors: ['DESCRIPTION_EMPTY'],
  },
  {
    title: 'description of 1024',
    text: `---\nname: a\ndescription: ${'d'.repeat(1024)}\n---\nbody`,
    errors: [],
  },
  {
    title: 'description of 1025',
    text: `---\nname: a\ndescription: ${'d'.repeat(1025)}\n---\nbody`,
    errors: ['DESCRIPTION_TOO_LONG'],
  },
  {
    title: 'compatibility of 501',
    text: ok(`compatibility: ${'c'.repeat(501)}\n`),
    errors: ['FIELD_TOO_LONG'],
  },
  { title: 'unknown key', text: ok('version: 1.0\n'), errors: ['UNKNOWN_KEY'] },
  { title: 'metadata not a map', text: ok('metadata: hello\n'), errors: ['METADATA_NOT_MAP'] },
  {
    title: 'metadata value not a string',
    text: ok('metadata:\n  version: 2\n'),
    errors: ['METADATA_VALUE_NOT_STRING'],
  },
  {
    title: 'allowed-tools as a list',
    text: ok('allowed-tools:\n  - Read\n  - Bash\n'),
    errors: [],
    warnings: ['ALLOWED_TOOLS_LIST'],
  },
  { title: 'allowed-tools as a number', text: ok('allowed-tools: 3\n'), errors: ['FIELD_NOT_STRING'] },
  { title: 'empty body', text: ok('', ''), errors: [], warnings: ['BODY_EMPTY'] },
  { title: 'long body', text: ok('', 'line\n'.repeat(600)), errors: [], warnings: ['BODY_LONG'] },
  {
    title: 'alias bomb',
    text: `---\nname: a\ndescription: d\nx: &a [1,1,1,1,1,1,1,1,1]\ny: &b [${'*a,'.repeat(60)}*a]\n---\nbody`,
    errors: ['FRONTMATTER_YAML'],
  },
];

for (const row of rows) {
  test(`validation table: ${row.title}`, () => {
    const lint = lintSkillMarkdown(row.text, row.folder ?? null);
    assert.deepEqual(
      [...new Set(lint.errors.map((e) => e.code))].sort(),
      [...row.errors].sort(),
      JSON.stringify(lint.errors),
    );
    assert.equal(lint.valid, row.errors.length === 0);
    for (const code of row.warnings ?? []) {
      assert.ok(
        lint.warnings.some((w) => w.code === code),
        `${code} expected in ${JSON.stringify(lint.warnings)}`,
      );
    }
    for (const finding of lint.errors) assert.ok(finding.message.length > 10, 'every error says what to fix');
  });
}

test('parsed fields and body come back as written', () => {
  const lint = lintSkillMarkdown(
    ok(
      'license: MIT\nmetadata:\n  author: someone\nallowed-tools: Read Bash(git:*)\n',
      '# Title\r\n\r\nStep one.\r\n',
    ),
    'pdf-tools',
  );
  assert.equal(lint.skill.name, 'pdf-tools');
  assert.equal(lint.skill.license, 'MIT');
  assert.deepEqual(lint.skill.metadata, { author: 'someone' });
  assert.deepEqual(lint.skill.allowed_tools, ['Read', 'Bash(git:*)']);
  assert.equal(lint.body, '# Title\n\nStep one.\n');
  assert.equal(lint.frontmatter?.license, 'MIT');
});
