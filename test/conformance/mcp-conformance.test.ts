/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance), protocol-level
 * server scenarios, against the gateway on both HTTP engines.
 *
 * The suite needs Node 22+, so it runs under a Node 22 binary from the npm registry; both are
 * installed on first use into .cache/conformance/ (git-ignored) and reused afterwards. The
 * suite cannot send custom headers, so it talks to a loopback proxy that adds X-API-Key and
 * forwards everything else untouched, Host and Origin included, for the gateway to judge.
 *
 * dns-rebinding-protection sends an initialize with Host and Origin both set to the URL it
 * was given (http://127.0.0.1:<proxy port>) and expects 2xx, and with both set to
 * evil.example.com and expects 4xx. It runs against the default configuration: the
 * gateway admits its own loopback origin and refuses every other unlisted one.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ApiKeyProxy, startApiKeyProxy } from '../support/api-key-proxy.ts';
import { CONFORMANCE, explain, runConformanceServer } from '../support/conformance.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { ensureNode22Packages, type Node22Install, REPO_ROOT } from '../support/node22.ts';

const CONFORMANCE_VERSION = '0.1.16';
const CACHE_DIR = join(REPO_ROOT, '.cache', 'conformance');
const SCENARIO_TIMEOUT_MS = 30_000;

/** Each scenario with the check ids this suite version reports for it: all must be present and pass. */
const SCENARIOS: Record<string, string[]> = {
  'server-initialize': ['server-initialize'],
  ping: ['ping'],
  'tools-list': ['tools-list'],
  'dns-rebinding-protection': ['localhost-host-rebinding-rejected', 'localhost-host-valid-accepted'],
};

let suite: Node22Install;

describe(`MCP conformance suite ${CONFORMANCE_VERSION}: server scenarios`, () => {
  before(
    async () => {
      suite = await ensureNode22Packages([`${CONFORMANCE}@${CONFORMANCE_VERSION}`], {
        cacheDir: CACHE_DIR,
        log: (line) => console.log(`[conformance] ${line}`),
      });
    },
    { timeout: 300_000 },
  );

  for (const engine of ['uws', 'node'] as const) {
    describe(`${engine} engine`, () => {
      let gateway: TestGateway | undefined;
      let proxy: ApiKeyProxy;

      before(async () => {
        proxy = await startApiKeyProxy(() => {
          assert.ok(gateway, 'gateway not started');
          return { url: gateway.url, apiKey: gateway.apiKey };
        });
        gateway = await startTestGateway({ engine });
      });
      after(async () => {
        await proxy?.close();
        await gateway?.close();
      });

      for (const [scenario, expectedIds] of Object.entries(SCENARIOS)) {
        test(scenario, async () => {
          const run = await runConformanceServer(
            suite,
            ['--url', `${proxy.url}/event/mcp`, '--scenario', scenario],
            SCENARIO_TIMEOUT_MS,
          );
          const why = explain(run, scenario);
          const checks = run.scenarios.get(scenario);
          assert.equal(run.code, 0, `conformance suite failed:\n${why}`);
          assert.ok(checks && checks.length > 0, `no checks reported:\n${why}`);
          const notPassed = checks.filter((check) => check.status !== 'SUCCESS');
          assert.deepEqual(notPassed, [], `checks not passed:\n${why}`);
          assert.deepEqual(
            checks.map((check) => check.id).sort(),
            [...expectedIds].sort(),
            `unexpected check set:\n${why}`,
          );

          if (scenario === 'dns-rebinding-protection') {
            // The rejection must come from the Origin policy, not from a lost API key.
            const rejected = checks.find((check) => check.id === 'localhost-host-rebinding-rejected');
            assert.equal(rejected?.details?.statusCode, 403, why);
            assert.equal(
              (rejected?.details?.body as { error?: string } | null)?.error,
              'forbidden_origin',
              why,
            );
          }
        });
      }
    });
  }
});
