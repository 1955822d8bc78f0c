import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeFrame, FrameDecoder, FrameError } from '../../shared/ipc/frame-codec.ts';
import { parseFrame } from '../../shared/ipc/frame-schema.ts';

const req = { t: 'req', id: 7, method: 'publish', params: { value: 'héllo ✓', key: 'k' }, deadlineMs: 1000 };
const res = {
  t: 'res',
  id: 7,
  result: { topic: 't', partition: 0, offset: 12, timestamp: '2024-01-01T00:00:00.000Z' },
};

describe('frame codec', () => {
  it('round-trips a frame', () => {
    const decoder = new FrameDecoder();
    assert.deepEqual(decoder.push(encodeFrame(req)), [req]);
    assert.equal(decoder.pendingBytes, 0);
  });

  it('reassembles a frame split at every byte', () => {
    const bytes = encodeFrame(req);
    const decoder = new FrameDecoder();
    const out: unknown[] = [];
    for (let i = 0; i < bytes.length; i += 1) out.push(...decoder.push(bytes.subarray(i, i + 1)));
    assert.deepEqual(out, [req]);
  });

  it('splits several frames merged into one chunk, and a chunk ending mid-header', () => {
    const all = Buffer.concat([encodeFrame(req), encodeFrame(res), encodeFrame(req)]);
    const decoder = new FrameDecoder();
    const cut = encodeFrame(req).length + encodeFrame(res).length + 2;
    assert.deepEqual(decoder.push(all.subarray(0, cut)), [req, res]);
    assert.equal(decoder.pendingBytes, 2);
    assert.deepEqual(decoder.push(all.subarray(cut)), [req]);
  });

  it('refuses an announced length over the limit before buffering the body', () => {
    const decoder = new FrameDecoder(1024);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(1025, 0);
    assert.throws(
      () => decoder.push(header),
      (e: unknown) => e instanceof FrameError && /over the 1024-byte limit/.test(e.message),
    );
  });

  it('refuses to encode a frame over the limit', () => {
    assert.throws(
      () => encodeFrame({ t: 'res', id: 1, result: 'x'.repeat(2000) }, 1024),
      (e: unknown) => e instanceof FrameError && /exceeds the 1024-byte limit/.test(e.message),
    );
  });

  it('reports garbage bodies, empty frames and trailing bytes as FrameError', () => {
    const frame = (body: Buffer) => {
      const header = Buffer.alloc(4);
      header.writeUInt32BE(body.length, 0);
      return Buffer.concat([header, body]);
    };
    assert.throws(() => new FrameDecoder().push(frame(Buffer.from([0xd4, 0x05, 0x01]))), FrameError);
    assert.throws(() => new FrameDecoder().push(frame(Buffer.alloc(0))), FrameError);
    const valid = encodeFrame(req).subarray(4);
    assert.throws(() => new FrameDecoder().push(frame(Buffer.concat([valid, Buffer.from([1])]))), FrameError);
    assert.throws(() => new FrameDecoder().push(frame(valid.subarray(0, valid.length - 1))), FrameError);
  });
});

describe('frame schema', () => {
  it('accepts every frame kind', () => {
    for (const frame of [
      { t: 'hello', version: 1 },
      { t: 'hello', version: 1, workerId: 'w' },
      req,
      { t: 'cancel', id: 3 },
      res,
      { t: 'err', id: 3, error: { code: 'UNKNOWN_TOPIC', message: 'm', retriable: false } },
    ]) {
      assert.equal(parseFrame(frame).ok, true, JSON.stringify(frame));
    }
  });

  it('keeps only the fields a frame type has (a newer peer may send more)', () => {
    const parsed = parseFrame({ ...req, extra: 1, trace: { traceparent: 'tp', other: 2 } });
    assert.equal(parsed.ok, true);
    if (parsed.ok) assert.deepEqual(parsed.frame, { ...req, trace: { traceparent: 'tp' } });
    const error = parseFrame({
      t: 'err',
      id: 3,
      error: { code: 'INTERNAL', message: 'm', retriable: false, x: 1 },
    });
    assert.ok(error.ok && error.frame.t === 'err');
    if (error.ok && error.frame.t === 'err')
      assert.deepEqual(error.frame.error, { code: 'INTERNAL', message: 'm', retriable: false });
  });

  it('rejects wrong shapes with a sentence', () => {
    const cases: unknown[] = [
      null,
      42,
      { t: 'nope' },
      { t: 'req', id: 0, method: 'publish', params: {}, deadlineMs: 1 },
      { t: 'req', id: 1.5, method: 'publish', params: {}, deadlineMs: 1 },
      { t: 'req', id: 1, method: 'dropTables', params: {}, deadlineMs: 1 },
      { t: 'req', id: 1, method: 'publish', params: {}, deadlineMs: -1 },
      { t: 'err', id: 1, error: { code: 'MADE_UP', message: 'm', retriable: true } },
      { t: 'err', id: 1, error: 'INTERNAL' },
      { t: 'req', id: 1, method: 'publish', params: {}, deadlineMs: 1, trace: { traceparent: 7 } },
      { t: 'cancel', id: 1, answerNow: false },
      { t: 'hello', version: 1, token: 'x'.repeat(1001) },
      { t: 'ping' },
      ['req'],
      { t: 'toString' },
    ];
    for (const value of cases) {
      const parsed = parseFrame(value);
      assert.equal(parsed.ok, false, JSON.stringify(value));
      if (!parsed.ok) assert.match(parsed.problem, /^malformed IPC frame/);
    }
  });
});
