/**
 * The MCP conformance suite's 0.2.0 prerelease (the first with 2026-07-28 scenarios) at
 * `--spec-version 2026-07-28`, against the same URL and the same X-API-Key proxy as the
 * stable suite's 2025 run (mcp-conformance.test.ts), on both HTTP engines.
 *
 * One CLI run per engine runs every server scenario the suite has for 2026-07-28
 * (`--suite all`, so pending ones such as http-header-validation run too). Each scenario is
 * then judged here, and none is skipped:
 *
 * - APPLICABLE scenarios must pass every check, except the checks listed with them, each
 *   with its reason and the status and message it must show (so an excused check that
 *   starts failing for another reason still fails the test).
 * - NOT_APPLICABLE scenarios exercise what a tools-only namespace does not have (the
 *   suite's fixture tools, prompts, resources, completion, input-required results). They
 *   still run: every check that does not pass must fail for the reason given, and every
 *   message the gateway sent must be valid 2026-07-28 JSON (the suite's wire-schema-valid).
 * - A scenario in neither list (a newer suite) fails the test until it is classified.
 *
 * The same lists, with the same reasons, are in docs/decisions/0012-mcp-conformance-2026-07-28.md.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ApiKeyProxy, startApiKeyProxy } from '../support/api-key-proxy.ts';
import {
  type Check,
  CONFORMANCE,
  explain,
  runConformanceServer,
  type SuiteRun,
} from '../support/conformance.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { ensureNode22Packages, type Node22Install, REPO_ROOT } from '../support/node22.ts';

/** Newest 0.2.0 prerelease on npm on 2026-11-23 (`npm view @modelcontextprotocol/conformance versions`). */
const CONFORMANCE_VERSION = '0.2.0-alpha.12';
const SPEC_VERSION = '2026-07-28';
const CACHE_DIR = join(REPO_ROOT, '.cache', 'conformance');
const RUN_TIMEOUT_MS = 300_000;

interface ExcusedCheck {
  /** The statuses the check may show instead of SUCCESS. */
  status: Array<Check['status']>;
  /** What its errorMessage must say, which is the reason showing. */
  message?: RegExp;
  reason: string;
}

/** A check that needs one of the suite's diagnostic fixture tools, which no namespace has. */
const fixtureTool = (tool: string, what: string): ExcusedCheck => ({
  status: ['FAILURE'],
  message: new RegExp(`Not testable: server does not list the diagnostic tool '${tool}'`),
  reason: `needs the suite's fixture tool ${tool} (${what}); no gateway tool has that behaviour`,
});
const noListChanged: ExcusedCheck = {
  status: ['SKIPPED'],
  reason:
    'subscriptions/listen: the gateway advertises no listChanged or subscribe capability and answers 404 / -32601, which the suite accepts as not applicable',
};
const notServed = (method: string): ExcusedCheck => ({
  status: ['FAILURE'],
  message: new RegExp(`${method.replace('/', '\\/')} returned JSON-RPC error -32601`),
  reason: `the gateway serves no ${method.split('/')[0]}: ${method} is an unimplemented method (404 / -32601), so it has no cache hints to check`,
});

/** Scenarios that apply to a tools-only namespace, with the checks in them that cannot. */
const APPLICABLE: Record<string, Record<string, ExcusedCheck>> = {
  'server-stateless': {
    'sep-2575-server-rejects-undeclared-capability': fixtureTool(
      'test_missing_capability',
      'a tool that needs a client capability',
    ),
    'sep-2575-missing-capability-http-400': fixtureTool(
      'test_missing_capability',
      'a tool that needs a client capability',
    ),
    'sep-2575-http-server-no-independent-requests-on-stream': fixtureTool(
      'test_streaming_elicitation',
      'a tool that streams and elicits',
    ),
    'sep-2575-server-no-log-without-loglevel': fixtureTool(
      'test_logging_tool',
      'a tool that sends log notifications',
    ),
    'sep-2575-server-sends-subscription-ack': noListChanged,
    'sep-2575-server-tags-subscription-id': noListChanged,
    'sep-2575-server-honors-notification-filter': noListChanged,
    'sep-2575-server-sends-prompts-list-changed-on-subscription': noListChanged,
    'sep-2575-server-sends-tools-list-changed-on-subscription': noListChanged,
  },
  'tools-list': {},
  caching: {
    'sep-2549-prompts-list-caching-hints': notServed('prompts/list'),
    'sep-2549-resources-list-caching-hints': notServed('resources/list'),
    'sep-2549-resources-templates-list-caching-hints': notServed('resources/templates/list'),
    'sep-2549-resources-read-caching-hints': {
      status: ['SKIPPED'],
      message: /resources\/read was not exercised/,
      reason: 'the gateway serves no resources, so there is nothing to read',
    },
  },
  'dns-rebinding-protection': {},
  'http-header-validation': {},
  'server-sse-multiple-streams': {
    'server-sse-streams-functional': {
      status: ['INFO'],
      message: /^$/,
      reason: 'informational: the gateway answers every request with JSON, and SSE streams are optional',
    },
  },
  'sep-2164-resource-not-found': {
    'sep-2164-error-code': {
      status: ['WARNING'],
      message: /Expected error code -32602 \(Invalid Params\), got -32601/,
      reason:
        'the gateway serves no resources: resources/read is an unimplemented method (404 / -32601), not a lookup that found nothing',
    },
    'sep-2164-data-uri': {
      status: ['WARNING'],
      message: /data\.uri is undefined/,
      reason: 'same: a method-not-found error names no resource',
    },
  },
  'input-required-result-unsupported-methods': {},
  'input-required-result-validate-input': {},
};

const UNKNOWN_FIXTURE_TOOL = /Unknown tool: test_\w+\. Call tools\/list/;
const notImplemented = (methods: string) =>
  new RegExp(`Method not found in protocol 2026-07-28: (${methods})\\b`);

/** Scenarios that need what a tools-only namespace does not have; every non-passing check must say so. */
const NOT_APPLICABLE: Record<string, { reason: string; evidence: RegExp }> = {
  'completion-complete': {
    reason: 'completion/complete: the gateway has no prompts or resource templates to complete',
    evidence: notImplemented('completion/complete'),
  },
  ...Object.fromEntries(
    [
      'tools-call-simple-text',
      'tools-call-image',
      'tools-call-audio',
      'tools-call-embedded-resource',
      'tools-call-mixed-content',
      'tools-call-error',
      'tools-call-with-progress',
    ].map((scenario) => [
      scenario,
      {
        reason: "calls one of the suite's fixture tools (test_*), which no namespace has",
        evidence: UNKNOWN_FIXTURE_TOOL,
      },
    ]),
  ),
  'json-schema-2020-12': {
    reason: "lists the suite's fixture tool json_schema_2020_12_tool, which no namespace has",
    evidence: /Tool 'json_schema_2020_12_tool' not found/,
  },
  ...Object.fromEntries(
    [
      'resources-list',
      'resources-read-text',
      'resources-read-binary',
      'resources-templates-read',
      'prompts-list',
      'prompts-get-simple',
      'prompts-get-with-args',
      'prompts-get-embedded-resource',
      'prompts-get-with-image',
    ].map((scenario) => [
      scenario,
      {
        reason:
          'the gateway serves tools only: prompts and resources methods are unimplemented (404 / -32601)',
        evidence: notImplemented('resources/list|resources/read|prompts/list|prompts/get'),
      },
    ]),
  ),
  'http-custom-header-server-validation': {
    reason:
      'no gateway tool declares an x-mcp-header parameter, so there is no Mcp-Param-* header to validate',
    evidence: /Not testable: server exposes no tool with x-mcp-header annotations/,
  },
  ...Object.fromEntries(
    [
      'input-required-result-basic-elicitation',
      'input-required-result-basic-sampling',
      'input-required-result-basic-list-roots',
      'input-required-result-request-state',
      'input-required-result-multiple-input-requests',
      'input-required-result-multi-round',
      'input-required-result-missing-input-response',
      'input-required-result-non-tool-request',
      'input-required-result-result-type',
      'input-required-result-tampered-state',
      'input-required-result-capability-check',
      'input-required-result-ignore-extra-params',
    ].map((scenario) => [
      scenario,
      {
        reason:
          "input-required results (MRTR): needs the suite's test_input_required_* fixture tools or prompts; no gateway tool asks the client for input",
        evidence: new RegExp(
          [
            UNKNOWN_FIXTURE_TOOL.source,
            notImplemented('prompts/get').source,
            'Expected InputRequiredResult with inputRequests and requestState',
            'Prerequisite failed: could not get initial InputRequiredResult',
            'Server returned JSON-RPC error instead of re-requesting via InputRequiredResult',
          ].join('|'),
        ),
      },
    ]),
  ),
};

let suite: Node22Install;

describe(`MCP conformance suite ${CONFORMANCE_VERSION} at --spec-version ${SPEC_VERSION}`, () => {
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
      let run: SuiteRun;

      before(
        async () => {
          proxy = await startApiKeyProxy(() => {
            assert.ok(gateway, 'gateway not started');
            return { url: gateway.url, apiKey: gateway.apiKey };
          });
          gateway = await startTestGateway({ engine });
          run = await runConformanceServer(
            suite,
            ['--url', `${proxy.url}/event/mcp`, '--spec-version', SPEC_VERSION, '--suite', 'all'],
            RUN_TIMEOUT_MS,
          );
        },
        { timeout: RUN_TIMEOUT_MS + 30_000 },
      );
      after(async () => {
        await proxy?.close();
        await gateway?.close();
      });

      test('the suite ran to its end, and every scenario it has for 2026-07-28 is classified here', () => {
        const why = explain(run);
        // Exit 1 is the suite reporting the not-applicable scenarios' failures; a signal or anything else is not.
        assert.ok(run.code === 0 || run.code === 1, `conformance suite did not finish:\n${why}`);
        assert.deepEqual(
          [...run.scenarios.keys()].sort(),
          [...Object.keys(APPLICABLE), ...Object.keys(NOT_APPLICABLE)].sort(),
          `scenario set differs from the classified one:\n${why}`,
        );
      });

      for (const [scenario, excused] of Object.entries(APPLICABLE)) {
        test(`${scenario}: every applicable check passes`, () => {
          const checks = run.scenarios.get(scenario);
          const why = explain(run, scenario);
          assert.ok(checks && checks.length > 0, `no checks reported:\n${why}`);
          assert.ok(
            checks.some((check) => check.status === 'SUCCESS'),
            `nothing passed:\n${why}`,
          );
          const unexpected = checks.filter((check) => {
            if (check.status === 'SUCCESS') return false;
            const excuse = excused[check.id];
            if (!excuse?.status.includes(check.status)) return true;
            return excuse.message !== undefined && !excuse.message.test(check.errorMessage ?? '');
          });
          assert.deepEqual(unexpected, [], `checks not passed:\n${why}`);
          // An excused check the suite no longer reports is a stale excuse: drop it from the list.
          const reported = new Set(checks.map((check) => check.id));
          assert.deepEqual(
            Object.keys(excused).filter((id) => !reported.has(id)),
            [],
            `excused checks not reported:\n${why}`,
          );
        });
      }

      for (const [scenario, { evidence }] of Object.entries(NOT_APPLICABLE)) {
        test(`${scenario}: not applicable, and fails only for that reason`, () => {
          const checks = run.scenarios.get(scenario);
          const why = explain(run, scenario);
          assert.ok(checks && checks.length > 0, `no checks reported:\n${why}`);
          const otherwise = checks.filter(
            (check) =>
              check.status !== 'SUCCESS' &&
              check.status !== 'INFO' &&
              !evidence.test(check.errorMessage ?? ''),
          );
          assert.deepEqual(otherwise, [], `checks failing for another reason:\n${why}`);
          for (const check of checks.filter((c) => c.id === 'wire-schema-valid')) {
            assert.equal(check.status, 'SUCCESS', `invalid 2026-07-28 message:\n${why}`);
          }
        });
      }
    });
  }
});
