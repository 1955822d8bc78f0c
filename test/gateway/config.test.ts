import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadGatewayConfig } from '../../gateway/config.ts';

test('defaults: 127.0.0.1:8080, ./data, auto engine, 1 MiB bodies', () => {
  const config = loadGatewayConfig({});
  assert.equal(config.HOST, '127.0.0.1');
  assert.equal(config.PORT, 8080);
  assert.equal(config.DATA_DIR, './data');
  assert.equal(config.HTTP_ENGINE, 'auto');
  assert.equal(config.MCP_MAX_BODY_BYTES, 1024 * 1024);
  assert.deepEqual(config.MCP_ALLOWED_ORIGINS, []);
});

test('a bad value is refused with a message naming the variable', () => {
  for (const [name, value] of [
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['HTTP_ENGINE', 'express'],
    ['MCP_MAX_BODY_BYTES', '-1'],
    ['LOG_LEVEL', 'loud'],
  ] as const) {
    assert.throws(
      () => loadGatewayConfig({ [name]: value }),
      (error: Error) => error instanceof ConfigError && error.message.includes(name),
      `${name}=${value}`,
    );
  }
});

test('origins are a comma-separated list', () => {
  const config = loadGatewayConfig({ MCP_ALLOWED_ORIGINS: 'https://a.example, https://b.example' });
  assert.deepEqual(config.MCP_ALLOWED_ORIGINS, ['https://a.example', 'https://b.example']);
});

test('DRAIN_GRACE_MS: 3 s when the ops listener can be probed, 0 without it, at most the 10 s drain', () => {
  assert.equal(loadGatewayConfig({}).DRAIN_GRACE_MS, 0);
  assert.equal(loadGatewayConfig({ METRICS_PORT: '9464' }).DRAIN_GRACE_MS, 3_000);
  assert.equal(loadGatewayConfig({ METRICS_PORT: '9464', DRAIN_GRACE_MS: '500' }).DRAIN_GRACE_MS, 500);
  assert.throws(
    () => loadGatewayConfig({ DRAIN_GRACE_MS: '10001' }),
    (error: Error) => error instanceof ConfigError && error.message.includes('DRAIN_GRACE_MS'),
  );
});
