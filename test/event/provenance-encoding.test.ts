/** The signed encoding and the key ring, without a broker: what the end-to-end file cannot isolate. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../gateway/config.ts';
import { canonicalBytes, Provenance, type SignedFields } from '../../gateway/namespaces/event/provenance.ts';
import { loadKeyRing } from '../../gateway/namespaces/event/signing-keys.ts';

const base: SignedFields = {
  keyId: 'hs256-abc',
  publisher: 'key_1',
  publishedAt: '2026-11-23T00:00:00.000Z',
  topic: 'tasks',
  key: null,
  value: 'v',
  headers: { a: '1', b: '2' },
};

test('different records never share an encoding', () => {
  const variants: SignedFields[] = [
    base,
    { ...base, key: '' },
    { ...base, key: 'k' },
    { ...base, value: '' },
    { ...base, value: null },
    { ...base, headers: {} },
    { ...base, headers: { a: '1' } },
    { ...base, headers: { a: '12' } },
    { ...base, headers: { a: '1', b: '2', c: '' } },
    // Moving bytes between neighbouring fields must change the encoding.
    { ...base, topic: 'task', key: 's' },
    { ...base, headers: { a: '1b', '': '2' } },
    { ...base, publisher: 'key_2' },
    { ...base, publishedAt: '2026-11-23T00:00:00.001Z' },
    { ...base, keyId: 'hs256-abd' },
  ];
  const encodings = new Set(variants.map((fields) => canonicalBytes(fields).toString('hex')));
  assert.equal(encodings.size, variants.length);
});

test('header order does not matter; names sort by UTF-8 bytes', () => {
  assert.deepEqual(canonicalBytes(base), canonicalBytes({ ...base, headers: { b: '2', a: '1' } }));
  // U+E000 and U+1F600 order one way in UTF-16 (surrogate 0xD83D < 0xE000) and the other
  // in UTF-8 (0xEE < 0xF0); UTF-8 is the order any consumer can reproduce from the bytes.
  const encoded = canonicalBytes({ ...base, headers: { '\u{1F600}': 'x', '\uE000': 'y' } });
  assert.ok(encoded.indexOf(Buffer.from('\uE000')) < encoded.indexOf(Buffer.from('\u{1F600}')));
});

test('a stamp verifies, and any changed field makes it invalid', () => {
  const keys = loadKeyRing({ EVENT_SIGNING_SECRET: 's'.repeat(32) });
  const provenance = new Provenance(keys);
  const { headers } = provenance.stamp({ topic: 'tasks', value: 'v', headers: { a: '1' } }, 'key_1');
  const message = { topic: 'tasks', partition: 0, offset: 5, key: null, value: 'v', headers, timestamp: '' };
  const ok = provenance.assess(message);
  assert.equal(ok.provenance, 'verified');
  assert.equal(ok.publisher, 'key_1');
  assert.deepEqual(ok.headers, { a: '1' });
  for (const changed of [
    { ...message, key: '' },
    { ...message, value: 'w' },
    { ...message, topic: 'other' },
    { ...message, headers: { ...headers, a: '2' } },
    { ...message, headers: { ...headers, extra: '' } },
    { ...message, headers: { ...headers, 'mcp-publisher': 'key_2' } },
  ]) {
    const result = provenance.assess(changed);
    assert.equal(result.provenance, 'invalid', JSON.stringify(changed));
    assert.equal(result.publisher, null);
  }
});

test('key ids come from the key: same secret, same id on every host; verify-only keys never sign', () => {
  const a = loadKeyRing({ EVENT_SIGNING_SECRET: 'x'.repeat(40) });
  const b = loadKeyRing({ EVENT_SIGNING_SECRET: 'x'.repeat(40) });
  const c = loadKeyRing({ EVENT_SIGNING_SECRET: 'y'.repeat(40), EVENT_VERIFY_SECRETS: 'x'.repeat(40) });
  assert.equal(a.signing!.id, b.signing!.id);
  assert.notEqual(c.signing!.id, a.signing!.id);
  assert.ok(c.verifier(a.signing!.id));
  assert.deepEqual(
    c.all.map((key) => key.id),
    [c.signing!.id, a.signing!.id],
  );
  const verifyOnly = loadKeyRing({ EVENT_VERIFY_SECRETS: 'x'.repeat(40) });
  assert.equal(verifyOnly.signing, null);
  assert.ok(verifyOnly.verifier(a.signing!.id));
});

test('caller headers with the reserved prefix are refused by name, in any case', () => {
  const provenance = new Provenance(loadKeyRing({}));
  assert.doesNotThrow(() => provenance.checkCallerHeaders({ 'x-mcp-publisher': '1', mcp: '2' }));
  assert.throws(
    () => provenance.checkCallerHeaders({ ok: '1', 'MCP-Publisher': 'key_1' }),
    /"MCP-Publisher" uses the prefix "mcp-"/,
  );
  assert.throws(() => loadKeyRing({ EVENT_SIGNING_SECRET: 'short' }), ConfigError);
});
