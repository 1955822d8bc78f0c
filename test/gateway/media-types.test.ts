/**
 * The media-type check keeps the verdicts of header strings that passed: a remembered good
 * string must never let a bad one through, and a refusal must still quote what was sent.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkMediaTypes } from '../../gateway/mcp/media-types.ts';

const GOOD = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function refusal(headers: Record<string, string>): { status: number; message: string } | null {
  const answer = checkMediaTypes(headers);
  if (!answer) return null;
  const body = JSON.parse(String(answer.body)) as { error: { message: string } };
  return { status: answer.status, message: body.error.message };
}

test('after a good pair is remembered, a bad Accept or Content-Type beside it is still refused', () => {
  assert.equal(refusal(GOOD), null);
  assert.equal(refusal(GOOD), null, 'the remembered pair passes again');

  const badAccept = refusal({ ...GOOD, accept: 'application/json' });
  assert.equal(badAccept?.status, 406);
  assert.match(badAccept.message, /got "application\/json"/);

  const badType = refusal({ ...GOOD, 'content-type': 'text/plain' });
  assert.equal(badType?.status, 415);
  assert.match(badType.message, /got "text\/plain"/);

  const { accept: _accept, ...noAccept } = GOOD;
  assert.equal(refusal(noAccept)?.status, 406);
  const { 'content-type': _type, ...noType } = GOOD;
  assert.equal(refusal(noType)?.status, 415);
});

test('a flood of distinct good strings keeps every verdict right', () => {
  for (let i = 0; i < 1000; i++) {
    assert.equal(
      refusal({ 'content-type': `application/json; x=${i}`, accept: `*/*;q=0.${(i % 9) + 1}` }),
      null,
    );
  }
  assert.equal(refusal({ ...GOOD, accept: 'text/event-stream;q=0, application/json' })?.status, 406);
  assert.equal(refusal(GOOD), null);
});
