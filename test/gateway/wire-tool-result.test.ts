/**
 * Tool results are written around the JSON text the tool model already made of the output
 * (the output is serialized once). The 2025 encoding must stay byte for byte what
 * JSON.stringify of the result object gives, as it always was, and the 2026-07-28 one must
 * carry the same content and structuredContent.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ToolResult } from '../../gateway/mcp/model.ts';
import { compileNamespace } from '../../gateway/mcp/namespace.ts';
import { encodeLegacyToolResult } from '../../gateway/mcp/wire/legacy.ts';

const OUTPUTS: unknown[] = [
  { ok: true },
  {},
  { text: 'quotes " and \\ backslashes, </script>, \u2028 and \u2029, é, 😀, \u0000 and \n' },
  { nested: { list: [1, 2.5, -0, null, 'x'], empty: [], deep: { a: { b: { c: [true, false] } } } } },
  { big: 'x'.repeat(100_000), n: Number.MAX_SAFE_INTEGER },
  { dropped: undefined, kept: 1 },
];

/** A result as runToolCall makes it. */
const resultOf = (output: unknown): ToolResult => ({
  isError: false,
  text: JSON.stringify(output),
  structured: output,
});

test('the 2025 encoding is byte for byte JSON.stringify of { content, structuredContent }', () => {
  for (const output of OUTPUTS) {
    const result = resultOf(output);
    const content = [{ type: 'text', text: result.text }];
    assert.equal(encodeLegacyToolResult(result), JSON.stringify({ content, structuredContent: output }));
  }
});

test('the 2025 encoding of an error carries its code in _meta only, and an output-less result is unchanged', () => {
  const error: ToolResult = { isError: true, text: 'Invalid "topic": use a-z, 0-9, ._-' };
  assert.equal(
    encodeLegacyToolResult(error),
    JSON.stringify({ content: [{ type: 'text', text: error.text }], isError: true }),
  );
  const coded: ToolResult = { isError: true, text: '[quota_exceeded] spent', code: 'quota_exceeded' };
  assert.equal(
    encodeLegacyToolResult(coded),
    JSON.stringify({
      content: [{ type: 'text', text: coded.text }],
      isError: true,
      _meta: { 'mcp-gateway/errorCode': 'quota_exceeded' },
    }),
  );
  const nothing = { isError: false, text: JSON.stringify(undefined), structured: undefined } as ToolResult;
  assert.equal(
    encodeLegacyToolResult(nothing),
    JSON.stringify({ content: [{ type: 'text', text: nothing.text }], structuredContent: undefined }),
  );
});

test('the 2026-07-28 encoding carries the same content and structuredContent', () => {
  const namespace = compileNamespace({
    name: 'wire',
    title: 'Wire',
    version: '1.0.0',
    instructions: 'test',
    tools: [],
  });
  for (const output of OUTPUTS) {
    const result = resultOf(output);
    const body = JSON.parse(String(namespace.modern.toolResult(7, result).body)) as {
      id: number;
      result: Record<string, unknown>;
    };
    assert.equal(body.id, 7);
    assert.deepEqual(body.result.content, [{ type: 'text', text: result.text }]);
    assert.deepEqual(body.result.structuredContent, JSON.parse(result.text));
    assert.equal(body.result.resultType, 'complete');
    assert.equal(body.result.isError, false);
  }
  const error = JSON.parse(
    String(namespace.modern.toolResult(8, { isError: true, text: 'no', code: 'NOT_FOUND' }).body),
  ) as { result: Record<string, unknown> & { _meta: Record<string, unknown> } };
  assert.deepEqual(error.result.content, [{ type: 'text', text: 'no' }]);
  assert.deepEqual(error.result.structuredContent, { code: 'NOT_FOUND' });
  assert.equal(error.result._meta['mcp-gateway/errorCode'], 'NOT_FOUND');
  assert.equal(error.result.isError, true);
  assert.equal(error.result.resultType, 'complete');
});
