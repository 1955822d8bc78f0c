/**
 * A capabilities answer is written with its fixed parts (tool catalogue, error codes)
 * encoded once and spliced in: both texts must be byte for byte what JSON.stringify writes
 * (the output's JSON, and that JSON quoted), whatever the changing parts hold, and a shape
 * the splice does not know must fall back to JSON.stringify rather than write other bytes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { capabilitiesJson, fixedJson } from '../../gateway/mcp/capabilities-splice.ts';
import { compileNamespace } from '../../gateway/mcp/namespace.ts';
import { mountedDefinition, mountNamespace } from '../../gateway/mcp/namespace-mount.ts';
import { eventNamespace } from '../../gateway/namespaces/event/index.ts';

const AWKWARD = [
  '',
  'quote " backslash \\ slash /',
  'controls \u0000\u0001\b\f\n\r\t\u001f\u007f',
  'emoji 😀',
  'lone high \ud800 and lone low \udc00 and reversed \udc00\ud800',
  'line separators \u2028\u2029',
  'non-Latin1 — … 日本語',
];

const tools = Object.freeze([Object.freeze({ name: 'a_tool', title: 'A "tool" \u2028', read_only: true })]);
const codes = Object.freeze([Object.freeze({ code: 'E', meaning: 'lone \ud800 surrogate' })]);
const fixed = fixedJson(tools, codes);

function assertSame(output: Parameters<typeof capabilitiesJson>[0], label: string): void {
  const json = JSON.stringify(output);
  const written = capabilitiesJson(output, fixed);
  assert.equal(written.json, json, label);
  assert.equal(written.quoted, JSON.stringify(json), label);
}

const answer = (text: string, extra: Record<string, unknown> = {}) => ({
  namespace: text,
  version: '1',
  ready: false,
  problems: [text],
  settings: { [text]: text, absent: undefined, n: Number.NaN },
  ...extra,
  tools,
  error_codes: codes,
  details: { nested: { text, list: [text, null, 1.5] } },
});

test('awkward strings in the changing parts are written as JSON.stringify writes them, twice', () => {
  for (const text of AWKWARD) assertSame(answer(text), text);
});

test('shapes the splice does not know fall back to JSON.stringify', () => {
  // Other arrays than the fixed ones, the fixed ones out of order, an empty head.
  assertSame({ ...answer('x'), tools: [...tools] }, 'a copy of the catalogue');
  const { tools: t, error_codes: e, details: d, ...head } = answer('x');
  assertSame({ ...head, details: d, tools: t, error_codes: e }, 'details first');
  assertSame({ tools: t, error_codes: e, details: d }, 'nothing before the catalogue');
  assertSame({ ...answer('x'), details: undefined } as never, 'no details');
});

test('the event namespace’s real capabilities answer is written byte for byte', async () => {
  const status = { configured: true, brokerConfigured: true, brokerReachable: false, missingSettings: [] };
  const broker = { call: () => Promise.resolve(status) };
  const namespace = compileNamespace(
    await mountedDefinition(mountNamespace(eventNamespace, {}, { broker } as never)),
  );
  const tool = namespace.tools.get('event_capabilities')!;
  const context = { caller: { apiKeyId: 'k' }, requestId: 'r' } as never;
  for (let call = 0; call < 3; call++) {
    const output = await tool.handler({}, context);
    const json = JSON.stringify(output);
    const written = tool.outputJson!(output);
    assert.equal(written.json, json);
    assert.equal(written.quoted, JSON.stringify(json));
  }
});
