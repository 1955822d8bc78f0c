import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkConversation, LONG, SHORT } from '../../bench/memory-quality-check.ts';
import { evalSets, halfOf, loadConversations } from '../../bench/memory-quality-set.ts';

// A wrong evidence index would score as a miss, silently: both sets are checked before any
// figure from them is believed.
test('both evaluation sets are well formed, with a held-out half of each', () => {
  const sets = evalSets();
  assert.deepEqual(
    sets.map((set) => set.name),
    ['conversations', 'chats'],
  );
  const ids = new Set<string>();
  for (const set of sets) {
    const conversations = loadConversations(set.dir);
    assert.ok(conversations.length >= 40, `${set.name}: ${conversations.length} conversations`);
    const shape = set.name === 'chats' ? SHORT : LONG;
    for (const c of conversations) {
      assert.deepEqual(checkConversation(c, shape), [], `${set.name}/${c.id}`);
      assert.ok(!ids.has(c.id), `${c.id} appears in two sets`);
      ids.add(c.id);
    }
    const heldOut = conversations.filter((c) => halfOf(c) === 'heldout');
    assert.equal(heldOut.length * 2, conversations.length, `${set.name}: half held out`);
    const updates = heldOut.flatMap((c) => c.questions).filter((q) => q.type === 'update');
    assert.ok(updates.length > 0, `${set.name}: held-out half has update questions`);
  }
});

test('the check refuses a question whose evidence points at no turn', () => {
  const [first] = loadConversations(evalSets()[1]!.dir);
  const broken = structuredClone(first!);
  broken.questions[0]!.evidence = [[9, 99]];
  assert.ok(checkConversation(broken, SHORT).some((p) => p.includes('no turn at [9,99]')));
});
