/**
 * One key's writes never land on another key's memories, through a real gateway over HTTP
 * on SQLite and on Postgres (the run's native server) with the write decider on: the same text does not fold into the other key's memory, the same
 * upsert key does not replace it, the decider's model is shown only the writing key's
 * memories, and the automatic update rule (a newer memory close in meaning supersedes an
 * older one) never crosses keys, while it does act within a key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { StateStore } from '../../../gateway/accounts/model.ts';
import { openStateStore } from '../../../gateway/accounts/open.ts';
import { type ChatBody, type OpenAiContract, startOpenAiContract } from '../../support/contracts/openai.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { waitFor } from '../../support/harness.ts';
import {
  contractEmbeddingsEnv,
  type EmbeddingsServer,
  startEmbeddingsServer,
} from '../../support/openai-embeddings.ts';
import { isolationStores, type Json, memoryCalls, mint } from './isolation-support.ts';

/** The existing memories the gateway showed the model, as it sent them. */
function shown(body: ChatBody): { id: string; content: string }[] {
  return JSON.parse(body.messages.at(-1)!.content!).existing;
}

const stores = isolationStores('mcp-memory-isolation-writes-');

for (const [kind, storeEnv] of Object.entries(stores)) {
  describe(`memory writes stay in their key on ${kind}`, () => {
    let gw: TestGateway;
    let embeddings: EmbeddingsServer;
    let chat: OpenAiContract;
    let state: StateStore;
    const { ok } = memoryCalls(() => gw.url);

    const ready = (key: string, id: string) =>
      waitFor(async () => (await ok(key, 'memory_get', { id })).embedding_status === 'ready', {
        what: `memory ${id} to be embedded`,
        timeoutMs: 60_000,
      });

    before(async () => {
      embeddings = await startEmbeddingsServer({ apiKey: 'sk-test-secret' });
      chat = await startOpenAiContract('sk-chat');
      gw = await startTestGateway({
        dataDir: storeEnv().DATA_DIR,
        env: {
          ...storeEnv(),
          ...contractEmbeddingsEnv(embeddings),
          MEMORY_EMBED_RETRY_MS: '200',
          MEMORY_SUPERSEDE_SIMILARITY: '0.8',
          MEMORY_WRITE_DECIDER: 'llm',
          MEMORY_LLM_URL: chat.url,
          MEMORY_LLM_API_KEY: 'sk-chat',
        },
      });
      state = await openStateStore(storeEnv());
    });

    after(async () => {
      await state?.close();
      await gw?.close();
      await chat?.close();
      await embeddings?.close();
    });

    test("another key's identical text, upsert key, decision and close meaning leave a key's memory alone", async () => {
      const [alice, bob] = [await mint(state, 'alice-writes'), await mint(state, 'bob-writes')];
      chat.reset(() => ({ content: '{"action":"add"}' }));
      const june = await ok(alice.key, 'memory_write', { content: 'The team offsite is in Lisbon in June' });
      const venue = await ok(alice.key, 'memory_write', { content: 'Hotel Avenida', key: 'venue' });
      await ready(alice.key, june.id);
      assert.equal(chat.bodies.length, 0, 'alice held nothing related: the model was not asked');

      // The same text in bob's key is bob's own new memory; the model is not asked, as bob
      // holds nothing related (alice's memory would have been shown if search crossed keys).
      const twin = await ok(bob.key, 'memory_write', { content: 'The team offsite is in Lisbon in June' });
      assert.equal(twin.status, 'created');
      assert.notEqual(twin.id, june.id);
      assert.equal(chat.bodies.length, 0);
      const otherVenue = await ok(bob.key, 'memory_write', { content: 'Hotel Baixa', key: 'venue' });
      assert.equal(otherVenue.status, 'created');
      assert.notEqual(otherVenue.id, venue.id);
      await ready(bob.key, twin.id);

      // Bob's update: the model sees bob's memory only, and its answer supersedes bob's.
      chat.reset((body) => ({ content: JSON.stringify({ action: 'update', id: shown(body)[0]!.id }) }));
      const july = await ok(bob.key, 'memory_write', { content: 'The team offsite is in Lisbon in July' });
      assert.deepEqual(july.decision, { action: 'update', target: twin.id });
      assert.deepEqual(
        chat.bodies.flatMap((body) => shown(body).map((m) => m.id)),
        [twin.id],
      );
      await ready(bob.key, july.id);

      const mine = await ok(alice.key, 'memory_get', { id: june.id });
      assert.equal(mine.superseded_by, null, "bob's close memory superseded alice's");
      assert.equal(mine.content, 'The team offsite is in Lisbon in June');
      assert.equal((await ok(alice.key, 'memory_get', { id: venue.id })).content, 'Hotel Avenida');
      const found = await ok(alice.key, 'memory_search', { query: 'where is the team offsite?' });
      assert.deepEqual(
        found.hits.map((hit: Json) => hit.id),
        [june.id],
      );
      assert.equal(found.total_memories, 2);
      assert.equal((await ok(bob.key, 'memory_get', { id: twin.id })).superseded_by, july.id);

      // Within alice's key the same close memory does supersede hers: the rule is on, and
      // only the key kept bob's from acting on it.
      chat.reset(() => ({ content: '{"action":"add"}' }));
      const hers = await ok(alice.key, 'memory_write', { content: 'The team offsite is in Lisbon in July' });
      await ready(alice.key, hers.id);
      await waitFor(
        async () => (await ok(alice.key, 'memory_get', { id: june.id })).superseded_by === hers.id,
        { what: "alice's newer memory to supersede her older one", timeoutMs: 60_000 },
      );
      for (const body of chat.bodies) {
        for (const m of shown(body)) assert.ok([june.id, venue.id].includes(m.id), `alice was shown ${m.id}`);
      }
      assert.equal((await ok(bob.key, 'memory_get', { id: july.id })).superseded_by, null);
      assert.equal((await ok(bob.key, 'memory_stats')).count, 3);
    });
  });
}
