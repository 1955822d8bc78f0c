/**
 * deploy/prometheus/alerts.yml, checked by the tool Prometheus itself loads rules with:
 * `promtool check rules` (syntax, templates) and `promtool test rules` on alerts.test.yml
 * (each alert fires on a series that should fire it and stays quiet on its neighbours).
 * Removing any one alert must then fail the unit tests, so no alert goes untested.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { debianTool } from '../support/debian-tool.ts';

const exec = promisify(execFile);
const dir = join(import.meta.dirname, '..', '..', 'deploy', 'prometheus');
const promtool = await debianTool({ package: 'prometheus', binary: 'promtool', how: 'extract' });
const skip = promtool.skip;
if (skip) console.log(`# deploy/prometheus: skipped: ${skip}`);

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
}
interface RuleFile {
  groups: Array<{ name: string; rules: Rule[] }>;
}

async function rules(): Promise<RuleFile> {
  return parse(await readFile(join(dir, 'alerts.yml'), 'utf8')) as RuleFile;
}

async function promtoolRun(args: string[], cwd: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await exec(promtool.path!, args, { cwd });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return { ok: false, output: stdout + stderr };
  }
}

test('promtool check rules accepts every rule in alerts.yml', { skip }, async () => {
  const count = (await rules()).groups.reduce((sum, group) => sum + group.rules.length, 0);
  const result = await promtoolRun(['check', 'rules', 'alerts.yml'], dir);
  assert.ok(result.ok, result.output);
  assert.match(result.output, new RegExp(`SUCCESS: ${count} rules found`));
});

test('promtool test rules: each alert fires where it should and is quiet where it should not', {
  skip,
}, async () => {
  const result = await promtoolRun(['test', 'rules', 'alerts.test.yml'], dir);
  assert.ok(result.ok, result.output);
  assert.match(result.output, /SUCCESS/);
});

test('every alert has a case expecting it to fire: without the alert the unit tests fail', {
  skip,
}, async () => {
  const file = await rules();
  const alerts = file.groups.flatMap((group) => group.rules.map((rule) => rule.alert)).filter(Boolean);
  assert.ok(alerts.length >= 10, `expected the full set of alerts, found ${alerts.length}`);
  const work = await mkdtemp(join(tmpdir(), 'alerts-mutant-'));
  try {
    await copyFile(join(dir, 'alerts.test.yml'), join(work, 'alerts.test.yml'));
    for (const alert of alerts) {
      const without: RuleFile = {
        groups: file.groups.map((group) => ({
          ...group,
          rules: group.rules.filter((r) => r.alert !== alert),
        })),
      };
      await writeFile(join(work, 'alerts.yml'), stringify(without));
      const result = await promtoolRun(['test', 'rules', 'alerts.test.yml'], work);
      assert.equal(
        result.ok,
        false,
        `alerts.test.yml still passes without ${alert}: it never expects ${alert}`,
      );
      assert.match(result.output, new RegExp(`alertname: ${alert}`), result.output);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
