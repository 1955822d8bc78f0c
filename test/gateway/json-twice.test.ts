/**
 * jsonTwice writes a value's JSON and that JSON quoted in one walk, remembering each
 * string's encodings: both texts must be byte for byte what JSON.stringify writes, whatever
 * the value holds and however often its strings come back.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonTwice } from '../../gateway/mcp/json-twice.ts';

function assertSame(value: unknown, label = ''): void {
  const json = JSON.stringify(value);
  const encoded = jsonTwice(value);
  assert.equal(encoded.json, json, label);
  assert.equal(encoded.quoted, JSON.stringify(json), label);
}

const AWKWARD_STRINGS = [
  '',
  'plain',
  'quote " backslash \\ slash /',
  'controls \u0000\u0001\b\f\n\r\t\u001f\u007f',
  'emoji 😀 and a pair split across nothing',
  'lone high \ud800 and lone low \udc00 and reversed \udc00\ud800',
  'line separators \u2028\u2029',
  'non-Latin1 — … 日本語',
  'Latin1 é ÿ',
  `a long one ${'x"\\'.repeat(400)}`,
];

test('strings, numbers and literals are written as JSON.stringify writes them, twice', () => {
  for (const text of AWKWARD_STRINGS) {
    assertSame(text, text);
    // The second time comes from what was remembered.
    assertSame(text, text);
    assertSame({ [text]: text }, `as a key: ${text}`);
  }
  for (const value of [
    0,
    -0,
    1.5,
    -1e21,
    1e-7,
    Number.MAX_VALUE,
    NaN,
    Infinity,
    -Infinity,
    true,
    false,
    null,
  ]) {
    assertSame(value, String(value));
    assertSame([value], String(value));
  }
});

test('what JSON.stringify leaves out or replaces is left out or replaced', () => {
  assertSame({ a: undefined, b: () => 1, c: Symbol('s'), d: 1 });
  assertSame({ a: undefined });
  assertSame({ first: undefined, second: 2, third: undefined });
  assertSame([undefined, () => 1, Symbol('s'), 1]);
  assertSame({ [Symbol('key')]: 1, visible: 1 });
  assert.equal(jsonTwice(undefined).json, '');
});

test('objects JSON.stringify treats specially are written by it', () => {
  const date = new Date(Date.UTC(2026, 10, 26, 16, 0, 0));
  assertSame({ at: date, when: [date] });
  assertSame({ custom: { toJSON: () => ({ replaced: 'by "toJSON"' }) } });
  assertSame({ gone: { toJSON: () => undefined }, kept: 1 });
  assertSame({ boxed: [new String('s "x"'), new Number(3), new Boolean(false)] });
  assertSame({ map: new Map([['a', 1]]), set: new Set([1]) });
  class Point {
    constructor(
      readonly x: number,
      readonly y: number,
    ) {}
  }
  assertSame({ point: new Point(1, 2) });
  const bare = Object.create(null) as Record<string, unknown>;
  bare.z = 'no prototype';
  bare.a = [1, { b: 'c' }];
  assertSame(bare);
  assert.throws(() => jsonTwice({ big: 1n }), TypeError);
});

test('key order, integer-like keys and nesting follow JSON.stringify', () => {
  assertSame({ b: 1, a: 2, 10: 'ten', 2: 'two', '-1': 'minus', nested: { z: [[], {}, [[{}]]], y: '' } });
  const withGetter = { plain: 1 } as Record<string, unknown>;
  Object.defineProperty(withGetter, 'computed', { enumerable: true, get: () => 'got "it"' });
  Object.defineProperty(withGetter, 'hidden', { enumerable: false, value: 'not listed' });
  assertSame(withGetter);
});

test('random values agree with JSON.stringify, with strings coming back and going past what is remembered', () => {
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
  const text = () => {
    if (random() < 0.5) return pick(AWKWARD_STRINGS);
    let out = '';
    const length = Math.floor(random() * 12);
    for (let index = 0; index < length; index++) out += String.fromCharCode(Math.floor(random() * 0x10000));
    return out;
  };
  const value = (depth: number): unknown => {
    const kind = Math.floor(random() * (depth > 3 ? 5 : 8));
    if (kind === 0) return text();
    if (kind === 1) return random() * 1e6 - 5e5;
    if (kind === 2) return random() < 0.5;
    if (kind === 3) return null;
    if (kind === 4) return undefined;
    if (kind === 5) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
    const record: Record<string, unknown> = {};
    for (let index = Math.floor(random() * 5); index > 0; index--) record[text()] = value(depth + 1);
    return record;
  };
  // Past 1,024 distinct strings the remembered set is emptied and refilled.
  for (let round = 0; round < 3000; round++) {
    const random = value(0);
    // JSON.stringify(undefined) is undefined, not a text: only inside something.
    if (random !== undefined) assertSame(random, `round ${round}`);
    assertSame([random], `round ${round} in an array`);
  }
});

test('deep-frozen data is encoded once; frozen objects that can still change are written every time', () => {
  const catalogue = Object.freeze([Object.freeze({ name: 'a "b"', tags: Object.freeze(['x', 'y']) })]);
  const value = { before: 1, catalogue, again: [catalogue], after: 'end' };
  assertSame(value);
  assertSame(value);
  // A getter on a frozen object answers anew each time.
  let count = 0;
  const counting = Object.freeze(
    Object.defineProperty({}, 'count', { enumerable: true, get: () => (count += 1) }),
  );
  assert.equal(jsonTwice({ counting }).json, '{"counting":{"count":1}}');
  assert.equal(jsonTwice({ counting }).json, '{"counting":{"count":2}}');
  assert.equal(jsonTwice([counting]).quoted, JSON.stringify('[{"count":3}]'));
  // A frozen shell around something unfrozen shows the inside as it is now.
  const inside = { status: 'up' };
  const shell = Object.freeze({ inside, list: Object.freeze([inside]) });
  assertSame(shell);
  inside.status = 'down "now"';
  assert.equal(jsonTwice(shell).json, JSON.stringify(shell));
  assertSame({ shell });
  // Frozen things JSON.stringify treats specially stay its business.
  const date = Object.freeze(new Date(0));
  assertSame(Object.freeze({ date }));
  const withToJson = Object.freeze({ toJSON: () => ({ made: 'by toJSON' }) });
  assertSame({ withToJson });
  // An unfrozen lookalike of frozen data is written as it is.
  const lookalike = [{ name: 'a "b"', tags: ['x', 'y'] }];
  assertSame({ lookalike });
  lookalike[0]!.name = 'changed';
  assertSame({ lookalike });
});
