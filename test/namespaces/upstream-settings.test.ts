/**
 * GSC, Product Hunt and Skills build their settings from what the contract parsed: the
 * schema is the only place a format rule is written, so the loaders turn checked strings
 * into values (numbers, trimmed URLs, lower-case choices) and add no second message for a
 * setting the schema already refused.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSettings } from '../../gateway/mcp/namespace-mount.ts';
import { gscSettings, loadGscSettings } from '../../gateway/namespaces/gsc/settings.ts';
import {
  loadProductHuntSettings,
  productHuntSettings,
} from '../../gateway/namespaces/producthunt/settings.ts';
import { loadSkillsSettings, skillsSettings } from '../../gateway/namespaces/skills/settings.ts';

test('gsc turns the parsed strings into its values', () => {
  const { settings, problems } = parseSettings(gscSettings, {
    GSC_API_BASE_URL: ' http://127.0.0.1:9/gsc/ ',
    GSC_DATA_STATE: 'FINAL',
    GSC_TIMEOUT_MS: ' 5000 ',
    GSC_MAX_ROWS: '25',
  });
  assert.deepEqual(problems, []);
  const gsc = loadGscSettings(settings!);
  assert.equal(gsc.apiBaseUrl, 'http://127.0.0.1:9/gsc');
  assert.equal(gsc.dataState, 'final');
  assert.equal(gsc.timeoutMs, 5000);
  assert.equal(gsc.maxRows, 25);
});

test('a setting the schema refused is named once, and the loader falls back to its default', () => {
  const { settings, problems } = parseSettings(gscSettings, {
    GSC_TIMEOUT_MS: '5',
    GSC_API_BASE_URL: 'ftp://x',
  });
  assert.equal(problems.length, 2, JSON.stringify(problems));
  const gsc = loadGscSettings(settings!);
  assert.equal(gsc.timeoutMs, 30_000);
  assert.equal(gsc.apiBaseUrl, 'https://searchconsole.googleapis.com');
  assert.deepEqual(
    gsc.readiness.problems.filter((p) => /GSC_TIMEOUT_MS|GSC_API_BASE_URL/.test(p)),
    [],
    'no second message from the loader',
  );
});

test('producthunt and skills read their parsed settings the same way', () => {
  const ph = parseSettings(productHuntSettings, {
    PRODUCTHUNT_API_URL: 'http://127.0.0.1:9/graphql/',
    PRODUCTHUNT_TIMEOUT_MS: '2000',
    PRODUCTHUNT_TOKEN: ' t0ken ',
  });
  assert.deepEqual(ph.problems, []);
  const product = loadProductHuntSettings(ph.settings!);
  assert.equal(product.apiUrl, 'http://127.0.0.1:9/graphql');
  assert.equal(product.timeoutMs, 2000);
  assert.deepEqual(product.auth, { kind: 'token', token: 't0ken' });
  assert.equal(product.readiness.ready, true);

  const sk = parseSettings(skillsSettings, { GITHUB_API_URL: 'not a url', SKILLS_AGENT_MODEL: ' gpt-x ' });
  assert.deepEqual(sk.problems, ['GITHUB_API_URL: must be an http(s) URL']);
  const skills = loadSkillsSettings(sk.settings!);
  assert.equal(skills.githubApiUrl, 'https://api.github.com');
  assert.equal(skills.agentModel, 'gpt-x');
  assert.equal(skills.registryUrl, null);
});
