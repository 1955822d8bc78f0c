/**
 * The gateway's link against a scripted in-process fake worker, to pin the protocol rules:
 * multiplexing, deadlines with cancel, late answers, unknown ids and broken frames.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { WorkerCallError } from '../../gateway/broker-client/errors.ts';
import { DEFAULT_LINK_OPTIONS, WorkerLink } from '../../gateway/broker-client/worker-link.ts';
import { FramedLink } from '../../shared/ipc/framed-link.ts';
import { IPC_PROTOCOL_VERSION, type IpcFrame } from '../../shared/ipc/messages.ts';
import { waitFor } from '../support/harness.ts';

interface FakeWorker {
  path: string;
  server: Server;
  frames: IpcFrame[];
  sockets: Socket[];
  links: FramedLink[];
  /** How the fake answers hello: its version, or null to ignore hello. */
  helloVersion: number | null;
  /** A fake that stops answering pings plays a worker that is stopped but keeps its socket. */
  answerPings: boolean;
  onRequest: (frame: Extract<IpcFrame, { t: 'req' }>, link: FramedLink) => void;
  close(): Promise<void>;
}

async function fakeWorker(): Promise<FakeWorker> {
  const path = join(mkdtempSync(join(tmpdir(), 'fake-')), 'w.sock');
  const fake: FakeWorker = {
    path,
    server: createServer((socket) => {
      fake.sockets.push(socket);
      const link = new FramedLink(socket, {
        onFrame(frame) {
          fake.frames.push(frame);
          if (frame.t === 'hello' && fake.helloVersion !== null)
            link.send({ t: 'hello', version: fake.helloVersion });
          if (frame.t === 'req') fake.onRequest(frame, link);
          if (frame.t === 'ping' && fake.answerPings) link.send({ t: 'pong', n: frame.n });
        },
        onClose() {},
      });
      fake.links.push(link);
    }),
    frames: [],
    sockets: [],
    links: [],
    helloVersion: IPC_PROTOCOL_VERSION,
    answerPings: true,
    onRequest: (frame, link) => link.send({ t: 'res', id: frame.id, result: { echo: frame.params } }),
    async close() {
      for (const socket of fake.sockets) socket.destroy();
      await new Promise<void>((resolve) => fake.server.close(() => resolve()));
    },
  };
  await new Promise<void>((resolve) => fake.server.listen(path, resolve));
  return fake;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(options: Partial<typeof DEFAULT_LINK_OPTIONS> = {}) {
  const fake = await fakeWorker();
  const link = new WorkerLink({ kind: 'unix', path: fake.path }, { ...DEFAULT_LINK_OPTIONS, ...options });
  link.start();
  cleanups.push(
    () => fake.close(),
    () => link.close(),
  );
  return { fake, link };
}

function isCallError(code: string) {
  return (error: unknown) => error instanceof WorkerCallError && error.code === code;
}

describe('worker link', () => {
  it('multiplexes calls and matches answers that come back out of order', async () => {
    const { fake, link } = await setup();
    const held: Array<Extract<IpcFrame, { t: 'req' }>> = [];
    fake.onRequest = (frame, wire) => {
      held.push(frame);
      if (held.length === 3) {
        for (const f of [...held].reverse()) wire.send({ t: 'res', id: f.id, result: f.params });
      }
    };
    const results = await Promise.all([1, 2, 3].map((n) => link.call('status', { n }, 2000)));
    assert.deepEqual(results, [{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  it('passes the relative deadline and maps err frames to WorkerCallError', async () => {
    const { fake, link } = await setup();
    fake.onRequest = (frame, wire) =>
      wire.send({
        t: 'err',
        id: frame.id,
        error: { code: 'UNKNOWN_TOPIC', message: 'no such topic', retriable: false },
      });
    await assert.rejects(link.call('publish', { value: 'x' }, 1234), (e: unknown) => {
      assert.ok(e instanceof WorkerCallError);
      assert.equal(e.code, 'UNKNOWN_TOPIC');
      assert.equal(e.retriable, false);
      return true;
    });
    const req = fake.frames.find((f) => f.t === 'req');
    assert.equal(req?.t === 'req' && req.deadlineMs, 1234);
  });

  it('times out a call, sends cancel, and takes the late answer without closing the link', async () => {
    const { fake, link } = await setup({ replyGraceMs: 10 });
    let first: Extract<IpcFrame, { t: 'req' }> | null = null;
    fake.onRequest = (frame, wire) => {
      if (!first) first = frame;
      else wire.send({ t: 'res', id: frame.id, result: 'second' });
    };
    await assert.rejects(link.call('status', {}, 100), isCallError('DEADLINE_EXCEEDED'));
    await waitFor(() => fake.frames.some((f) => f.t === 'cancel'), {
      what: 'a cancel frame at the worker',
      timeoutMs: 3000,
    });
    const cancel = fake.frames.find((f) => f.t === 'cancel');
    assert.equal(cancel?.t === 'cancel' && cancel.id, first!.id);
    fake.links[0]!.send({ t: 'res', id: first!.id, result: 'late' });
    assert.equal(await link.call('status', {}, 1000), 'second');
    assert.equal(link.connected, true);
  });

  it('sends cancel when the caller aborts', async () => {
    const { fake, link } = await setup();
    fake.onRequest = () => {};
    const controller = new AbortController();
    const call = link.call('consume', {}, 5000, controller.signal);
    await waitFor(() => fake.frames.some((f) => f.t === 'req'), {
      what: 'a req frame at the worker',
      timeoutMs: 3000,
    });
    controller.abort();
    await assert.rejects(call, isCallError('CANCELLED'));
    await waitFor(() => fake.frames.some((f) => f.t === 'cancel'), {
      what: 'a cancel frame at the worker',
      timeoutMs: 3000,
    });
  });

  it('closes the link on an answer for an unknown id, fails calls in flight, and reconnects', async () => {
    const { fake, link } = await setup();
    fake.onRequest = (frame, wire) => {
      if ((frame.params as { bad?: boolean }).bad) wire.send({ t: 'res', id: 999_999, result: null });
    };
    const waiting = link.call('status', {}, 5000);
    await waitFor(() => fake.frames.filter((f) => f.t === 'req').length === 1, {
      what: 'exactly one req frame at the worker',
      timeoutMs: 3000,
    });
    const bad = link.call('status', { bad: true }, 5000);
    await assert.rejects(waiting, isCallError('WORKER_UNREACHABLE'));
    await assert.rejects(bad, isCallError('WORKER_UNREACHABLE'));
    fake.onRequest = (frame, wire) => wire.send({ t: 'res', id: frame.id, result: 'again' });
    await waitFor(() => link.connected, { what: 'the link to connect', timeoutMs: 3000 });
    assert.equal(await link.call('status', {}, 1000), 'again');
  });

  it('closes the link when the worker sends garbage', async () => {
    const { fake, link } = await setup();
    fake.onRequest = () => fake.sockets[0]!.write(Buffer.from([0, 0, 0, 3, 0xc1, 0xc1, 0xc1]));
    await assert.rejects(link.call('status', {}, 2000), isCallError('WORKER_UNREACHABLE'));
  });

  it('gives up a link whose worker stops answering while the socket stays open (keepalive)', async () => {
    const { fake, link } = await setup();
    assert.deepEqual(await link.call('status', {}, 1000), { echo: {} });
    fake.answerPings = false;
    fake.onRequest = () => undefined;
    // The deadline is far away: only the keepalive can end this call early.
    await assert.rejects(link.call('status', {}, 600_000), (e: unknown) => {
      assert.ok(e instanceof WorkerCallError && e.code === 'WORKER_UNREACHABLE');
      assert.match(e.message, /stopped answering/);
      return true;
    });
    assert.ok(fake.frames.some((frame) => frame.t === 'ping'));
  });

  it('refuses a worker that speaks another protocol version', async () => {
    const { fake, link } = await setup();
    fake.helloVersion = 99;
    link.close();
    const other = new WorkerLink({ kind: 'unix', path: fake.path });
    cleanups.push(() => other.close());
    await assert.rejects(other.call('status', {}, 2000), (e: unknown) => {
      assert.ok(e instanceof WorkerCallError && e.code === 'WORKER_UNREACHABLE');
      assert.match(e.message, /protocol 99/);
      return true;
    });
  });
});
