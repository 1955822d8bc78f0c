import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import { hash32, pickWorker } from '../../gateway/broker-client/routing.ts';
import { loadBrokerClientSettings } from '../../gateway/broker-client/settings.ts';
import { formatEndpoint, parseEndpoint, parseEndpointList } from '../../shared/ipc/endpoint.ts';

const workers = ['unix:/run/a.sock', 'tcp:127.0.0.1:7071', 'tcp:10.0.0.5:7070'];
const keys = Array.from({ length: 3000 }, (_, i) => `group-${i}`);

describe('routing', () => {
  it('is a pure function of the key and the list (pinned values guard against accidental changes)', () => {
    // Changing the hash would move every group to another worker during a rolling deploy.
    assert.equal(hash32(''), 2872998923);
    assert.equal(hash32('orders'), 2069166408);
    assert.deepEqual(
      ['orders', 'agent-inbox', 'g-0', 'ключ'].map((k) => pickWorker(workers, k)),
      [1, 2, 1, 1],
    );
    for (const key of keys.slice(0, 50)) assert.equal(pickWorker(workers, key), pickWorker(workers, key));
  });

  it('does not depend on the order of the list', () => {
    const reversed = [...workers].reverse();
    for (const key of keys)
      assert.equal(reversed[pickWorker(reversed, key)], workers[pickWorker(workers, key)]);
  });

  it('spreads keys over all workers', () => {
    const counts = [0, 0, 0];
    for (const key of keys) counts[pickWorker(workers, key)]! += 1;
    for (const count of counts) assert.ok(count > 800 && count < 1200, `uneven spread: ${counts.join(', ')}`);
  });

  it('moves only the keys of a removed worker', () => {
    const fewer = [workers[0]!, workers[2]!];
    for (const key of keys) {
      const before = workers[pickWorker(workers, key)];
      const after = fewer[pickWorker(fewer, key)];
      if (before !== workers[1]) assert.equal(after, before, key);
    }
  });

  it('routes every group poll of a client to the worker of its group, including the default group', async () => {
    const endpoints = workers.map(parseEndpoint);
    const client = new BrokerWorkerClient({
      workers: endpoints,
      defaultGroup: 'fallback',
      link: { unreachableWaitMs: 1 },
    });
    try {
      assert.equal(client.workerFor('orders'), workers[pickWorker(workers, 'orders')]);
      assert.equal(client.workerFor('fallback'), workers[pickWorker(workers, 'fallback')]);
    } finally {
      await client.close();
    }
  });
});

describe('worker addresses', () => {
  it('parses unix and tcp forms', () => {
    assert.deepEqual(parseEndpoint('unix:/tmp/x.sock'), { kind: 'unix', path: '/tmp/x.sock' });
    assert.deepEqual(parseEndpoint('tcp:127.0.0.1:7070'), { kind: 'tcp', host: '127.0.0.1', port: 7070 });
    assert.deepEqual(parseEndpoint('tcp://[::1]:7070'), { kind: 'tcp', host: '::1', port: 7070 });
    assert.equal(formatEndpoint(parseEndpoint('tcp:[::1]:7070')), 'tcp:[::1]:7070');
    assert.match(parseEndpoint('unix:data/w.sock').kind, /unix/);
  });

  it('explains bad addresses', () => {
    assert.throws(() => parseEndpoint('127.0.0.1:7070'), /must start with unix: or tcp:/);
    assert.throws(() => parseEndpoint('tcp:host'), /not tcp:host:port/);
    assert.throws(() => parseEndpoint('tcp:host:99999'), /not tcp:host:port/);
    assert.throws(() => parseEndpoint(`unix:/${'x'.repeat(200)}`), /longer than 107 bytes/);
    assert.throws(() => parseEndpointList('unix:/a.sock, unix:/a.sock'), /listed twice/);
  });

  it('defaults to the unix socket under DATA_DIR and names BROKER_WORKERS when the list is bad', () => {
    const settings = loadBrokerClientSettings({ DATA_DIR: '/srv/gw' });
    assert.deepEqual(settings.workers, [{ kind: 'unix', path: '/srv/gw/broker-worker.sock' }]);
    assert.throws(
      () => loadBrokerClientSettings({ BROKER_WORKERS: 'nonsense' }),
      /^Error: BROKER_WORKERS: |BROKER_WORKERS/,
    );
  });
});
