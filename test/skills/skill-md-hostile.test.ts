/**
 * Frontmatter built to make the YAML parser work quadratically: tens of thousands of keys
 * (each checked against all before it for duplicates), aliases, deep nesting. Measured with
 * the parser reading it all: 104 s for 60,000 keys (589 KB). skills_get reads SKILL.md files
 * of up to 1 MiB from strangers, so the frontmatter is capped before the parser sees it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_FILE_BYTES } from '../../gateway/namespaces/skills/content.ts';
import { lintSkillMarkdown } from '../../gateway/namespaces/skills/skill-md.ts';

const keys = (count: number) => Array.from({ length: count }, (_, i) => `k${i}: v`).join('\n');

test('a frontmatter of 1 MiB of keys is refused as too large, unparsed', () => {
  const count = Math.floor(MAX_FILE_BYTES / 10);
  const lint = lintSkillMarkdown(`---\n${keys(count)}\n---\n# Body\n`, 'x');
  assert.deepEqual(
    lint.errors.map((error) => error.code),
    ['FRONTMATTER_TOO_LARGE'],
  );
  assert.equal(lint.frontmatter, null);
  assert.equal(lint.valid, false);
  assert.equal(lint.body, '# Body\n', 'the body is still read');
});

test('deep nesting and alias floods are refused the same way', () => {
  for (const yaml of [
    `name: ${'['.repeat(MAX_FILE_BYTES - 20)}`,
    `a: &a [x]\n${keys(20_000).replace(/v$/gm, '*a')}`,
  ]) {
    const lint = lintSkillMarkdown(`---\n${yaml}\n---\n`, null);
    assert.deepEqual(
      lint.errors.map((error) => error.code),
      ['FRONTMATTER_TOO_LARGE'],
    );
  }
});

test('a frontmatter under the cap is still parsed and checked key by key', () => {
  const lint = lintSkillMarkdown(`---\nname: x\ndescription: d\n${keys(1_000)}\n---\n`, 'x');
  assert.equal(lint.errors.length, 1_000);
  assert.ok(lint.errors.every((error) => error.code === 'UNKNOWN_KEY'));
  assert.equal(lint.skill.name, 'x');
});
