import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../gateway/logger.ts';
import { startTestGateway } from '../support/gateway.ts';

test('request logs carry a request id and the key id, never a key', async () => {
  const lines: string[] = [];
  const gw = await startTestGateway({
    env: { LOG_LEVEL: 'trace' },
    logDestination: { write: (line: string) => lines.push(line) },
  });
  const badKey = 'mcp_thisisnotregisteredbutlookslikeakey';
  try {
    for (const key of [gw.apiKey, badKey]) {
      await fetch(`${gw.url}/event/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'event_topics' },
        }),
      });
    }
  } finally {
    await gw.close();
  }
  const all = lines.join('');
  assert.ok(!all.includes(gw.apiKey), 'the registered key never appears');
  assert.ok(!all.includes(badKey), 'a refused key never appears');
  const call = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'tool call');
  assert.equal(call.apiKeyId, gw.apiKeyId);
  assert.match(call.requestId, /.+/);
  assert.ok(lines.some((line) => line.includes('"reason":"unregistered"')));
});

test('credential-looking fields are censored wherever they appear', () => {
  const lines: string[] = [];
  const log = createLogger('info', { write: (line: string) => lines.push(line) });
  log.info({ headers: { 'x-api-key': 'mcp_secret1' }, secret: 's3', nested: { password: 'p4' } }, 'x');
  const all = lines.join('');
  for (const secret of ['mcp_secret1', 's3', 'p4']) assert.ok(!all.includes(secret), secret);
});
