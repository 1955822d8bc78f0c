import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import {
  authorizeArguments,
  authorizeTool,
  FULL_SCOPES,
  type KeyScopes,
  parseStoredScopes,
  topicMatches,
} from '../../gateway/core/scopes.ts';
import { compileNamespace, NamespaceRoute } from '../../gateway/mcp/namespace.ts';
import { guardToolArguments, scopeAccess } from '../../gateway/mcp/scope-access.ts';
import { defineTool, ToolError } from '../../gateway/mcp/tool.ts';

const limited: KeyScopes = {
  namespaces: ['event'],
  readOnly: false,
  publishTopics: ['orders.*', 'audit'],
  consumeTopics: [],
};

test('topic patterns: * matches any run of characters, everything else is literal', () => {
  assert.ok(topicMatches('orders.*', 'orders.eu'));
  assert.ok(topicMatches('orders.*', 'orders.'));
  assert.ok(!topicMatches('orders.*', 'ordersXeu'), '"." is literal, not any character');
  assert.ok(!topicMatches('orders.*', 'x.orders.eu'));
  assert.ok(topicMatches('*-dlq', 'payments-dlq'));
  assert.ok(topicMatches('*', 'anything'));
  assert.ok(!topicMatches('audit', 'audit2'));
});

test('stored scopes: legacy {} means full access; an unreadable row grants nothing', () => {
  assert.deepEqual(parseStoredScopes('{}'), FULL_SCOPES);
  assert.deepEqual(parseStoredScopes(null), FULL_SCOPES);
  const broken = parseStoredScopes('{"namespaces":"event"}');
  assert.deepEqual(broken.namespaces, []);
  assert.equal(broken.readOnly, true);
});

test('refusals name the missing scope', () => {
  const namespace = authorizeTool(limited, 'memory', {
    name: 'memory_search',
    annotations: { readOnlyHint: true },
  });
  assert.equal(namespace.ok, false);
  assert.ok(!namespace.ok && namespace.missingScope === 'namespace:memory');
  assert.ok(!namespace.ok && /lacks the scope namespace:memory/.test(namespace.message));

  const readOnly = { ...limited, readOnly: true };
  const write = authorizeTool(readOnly, 'event', {
    name: 'event_publish',
    annotations: { readOnlyHint: false },
  });
  assert.ok(!write.ok && write.missingScope === 'read-write');
  assert.ok(
    authorizeTool(readOnly, 'event', { name: 'event_topics', annotations: { readOnlyHint: true } }).ok,
  );
  const unannotated = authorizeTool(readOnly, 'event', { name: 'x', annotations: {} });
  assert.equal(unannotated.ok, false, 'a tool that does not say it is read-only is not');

  assert.ok(authorizeArguments(limited, 'event', 'event_publish', { topic: 'orders.eu' }).ok);
  assert.ok(authorizeArguments(limited, 'event', 'event_publish', { topic: 'audit' }).ok);
  const elsewhere = authorizeArguments(limited, 'event', 'event_publish', { topic: 'payments' });
  assert.ok(!elsewhere.ok && elsewhere.missingScope === 'event:publish:payments');
  const consume = authorizeArguments(limited, 'event', 'event_consume', { topic: 'orders.eu' });
  assert.ok(!consume.ok && consume.missingScope === 'event:consume:orders.eu');
  const deleting = authorizeArguments(limited, 'event', 'event_delete_topic', { topic: 'payments' });
  assert.ok(
    !deleting.ok && deleting.missingScope === 'event:publish:payments',
    'topic admin follows publish',
  );
  const defaulted = authorizeArguments(limited, 'event', 'event_publish', {});
  assert.ok(!defaulted.ok && /name the topic explicitly/.test(defaulted.message));
  assert.ok(authorizeArguments(FULL_SCOPES, 'event', 'event_publish', {}).ok);
});

function sampleNamespace(calls: string[]) {
  const tool = (name: string, readOnlyHint: boolean) =>
    defineTool({
      name,
      title: name,
      description: name,
      input: z.object({ topic: z.string().optional() }),
      output: z.object({ ok: z.boolean() }),
      annotations: { readOnlyHint },
      handler: async () => {
        calls.push(name);
        return { ok: true };
      },
    });
  return {
    name: 'event',
    title: 'Event',
    version: '1',
    instructions: '',
    tools: [tool('event_topics', true), tool('event_publish', false)],
  };
}

test('access hooks: namespace and read-only refusals; tools/list shows only callable tools', () => {
  const compiled = compileNamespace(sampleNamespace([]));
  const access = scopeAccess([NamespaceRoute.of(compiled)]);
  const caller = (scopes: KeyScopes) => ({ apiKeyId: 'key_x', scopes });
  assert.equal(
    access.authorizeCall({ apiKeyId: 'key_x' }, { namespace: 'event', method: 'tools/call' }),
    null,
  );
  assert.equal(
    access.toolFilter(caller(FULL_SCOPES), 'event'),
    undefined,
    'full keys keep the precomputed list',
  );
  const memoryOnly = caller({ ...FULL_SCOPES, namespaces: ['memory'] });
  const refusal = access.authorizeCall(memoryOnly, { namespace: 'event', method: 'initialize' });
  assert.match(refusal?.message ?? '', /namespace:event/);
  assert.match(
    access.authorizeCall(memoryOnly, { namespace: 'event', method: 'tools/list' })?.message ?? '',
    /namespace:event/,
  );
  // Tool calls are left to the guard in front of each tool, whose refusal is a tool error.
  assert.equal(
    access.authorizeCall(memoryOnly, { namespace: 'event', method: 'tools/call', toolName: 'event_publish' }),
    null,
  );
  const readOnly = caller({ ...FULL_SCOPES, readOnly: true });
  assert.equal(access.authorizeCall(readOnly, { namespace: 'event', method: 'initialize' }), null);
  const filter = access.toolFilter(readOnly, 'event');
  assert.ok(filter);
  assert.deepEqual(['event_topics', 'event_publish'].filter(filter), ['event_topics']);
});

test('the argument guard refuses before the handler runs, and lets allowed calls through', async () => {
  const calls: string[] = [];
  const guarded = guardToolArguments(sampleNamespace(calls));
  const publish = guarded.tools.find((tool) => tool.name === 'event_publish');
  assert.ok(publish);
  const context = (scopes?: KeyScopes) => ({
    caller: { apiKeyId: 'key_x', ...(scopes ? { scopes } : {}) },
    signal: new AbortController().signal,
    requestId: 'r',
  });
  await assert.rejects(publish.handler({ topic: 'payments' }, context(limited)), (error: unknown) => {
    assert.ok(error instanceof ToolError);
    assert.match(error.message, /event:publish:payments/);
    return true;
  });
  assert.deepEqual(calls, [], 'the refused call never reached the namespace');
  await assert.rejects(
    publish.handler({ topic: 'orders.eu' }, context({ ...FULL_SCOPES, readOnly: true })),
    /read-write/,
  );
  await assert.rejects(
    publish.handler({ topic: 'orders.eu' }, context({ ...FULL_SCOPES, namespaces: ['memory'] })),
    /namespace:event/,
  );
  assert.deepEqual(calls, []);
  await publish.handler({ topic: 'orders.eu' }, context(limited));
  await publish.handler({}, context());
  assert.deepEqual(calls, ['event_publish', 'event_publish']);
});
