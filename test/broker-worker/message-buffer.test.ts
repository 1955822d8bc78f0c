import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assignBySubscription } from '../../broker-worker/consume/assigner.ts';
import type { BufferedMessage } from '../../broker-worker/consume/message.ts';
import {
  commitOffsetsFor,
  MessageBuffer,
  rewindOffsetsFor,
} from '../../broker-worker/consume/message-buffer.ts';

function msgs(partition: number, from: number, to: number, bytes = 10): BufferedMessage[] {
  const out: BufferedMessage[] = [];
  for (let offset = from; offset <= to; offset += 1) {
    out.push({
      partition,
      offset,
      bytes,
      message: {
        topic: 't',
        partition,
        offset,
        key: null,
        value: `${partition}:${offset}`,
        headers: {},
        timestamp: '',
      },
    });
  }
  return out;
}

const ids = (list: BufferedMessage[]) => list.map((m) => `${m.partition}:${m.offset}`);

describe('message buffer', () => {
  it('hands out in arrival order, keeping each partition in order', () => {
    const b = new MessageBuffer();
    b.assign([0, 1]);
    b.append(0, msgs(0, 0, 1));
    b.append(1, msgs(1, 5, 6));
    b.append(0, msgs(0, 2, 2));
    assert.deepEqual(ids(b.take(10)), ['0:0', '0:1', '1:5', '1:6', '0:2']);
    assert.equal(b.count, 0);
  });

  it('ignores partitions not assigned, and re-fetched duplicates', () => {
    const b = new MessageBuffer();
    b.assign([0]);
    assert.equal(b.append(1, msgs(1, 0, 3)), 0);
    assert.equal(b.append(0, msgs(0, 0, 3)), 4);
    // After a rebalance that keeps partition 0, kafkajs fetches again from the committed offset.
    b.assign([0]);
    assert.equal(b.append(0, msgs(0, 0, 5)), 2);
    assert.deepEqual(ids(b.take(100)), ['0:0', '0:1', '0:2', '0:3', '0:4', '0:5']);
  });

  it('puts back taken messages in order, but only into the same assignment', () => {
    const b = new MessageBuffer();
    b.assign([0, 1]);
    b.append(0, msgs(0, 0, 3));
    b.append(1, msgs(1, 0, 1));
    const taken = b.take(3);
    assert.deepEqual(ids(taken), ['0:0', '0:1', '0:2']);
    assert.equal(b.putBack(taken), 3);
    assert.deepEqual(ids(b.take(100)), ['0:0', '0:1', '0:2', '0:3', '1:0', '1:1']);

    b.append(0, msgs(0, 4, 5));
    const again = b.take(1);
    b.assign([1]); // partition 0 was revoked
    b.assign([0, 1]); // and came back: a new incarnation refetches from the committed offset
    assert.equal(b.putBack(again), 0);
    assert.equal(b.count, 0);
    assert.equal(b.append(0, msgs(0, 4, 5)), 2);
  });

  it('keeps a result under the byte budget but always returns at least one message', () => {
    const b = new MessageBuffer();
    b.assign([0]);
    b.append(0, msgs(0, 0, 9, 100));
    assert.equal(b.take(10, 250).length, 2);
    assert.equal(b.take(10, 50).length, 1);
    assert.equal(b.bytes, 700);
  });

  it('computes the offsets to commit and to rewind', () => {
    const list = [...msgs(0, 3, 5), ...msgs(2, 7, 7)];
    assert.deepEqual(
      [...commitOffsetsFor(list)],
      [
        [0, 6],
        [2, 8],
      ],
    );
    assert.deepEqual(
      [...rewindOffsetsFor(list)],
      [
        [0, 3],
        [2, 7],
      ],
    );
  });
});

describe('subscription-aware assignment', () => {
  it('gives each topic only to members subscribed to it, and every partition to exactly one member', () => {
    const plan = assignBySubscription(
      [
        { memberId: 'm-a', topics: ['orders'] },
        { memberId: 'm-b', topics: ['orders', 'audit'] },
        { memberId: 'm-c', topics: ['audit'] },
      ],
      (topic) => (topic === 'orders' ? [0, 1, 2, 3] : [0, 1]),
    );
    assert.equal(plan.get('m-a')?.audit, undefined);
    assert.equal(plan.get('m-c')?.orders, undefined);
    const orders = [...(plan.get('m-a')?.orders ?? []), ...(plan.get('m-b')?.orders ?? [])].sort();
    const audit = [...(plan.get('m-b')?.audit ?? []), ...(plan.get('m-c')?.audit ?? [])].sort();
    assert.deepEqual(orders, [0, 1, 2, 3]);
    assert.deepEqual(audit, [0, 1]);
  });
});
