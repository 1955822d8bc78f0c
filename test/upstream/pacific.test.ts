import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  addDays,
  daysBetween,
  isValidDate,
  pacificDate,
  pacificMidnight,
} from '../../gateway/upstream/pacific.ts';

test('Pacific dates differ from UTC dates in the evening and follow daylight time', () => {
  // 2026-01-15 06:59 UTC is still the 14th in Pacific standard time (UTC−8).
  assert.equal(pacificDate(Date.parse('2026-01-15T07:59:00Z')), '2026-01-14');
  assert.equal(pacificDate(Date.parse('2026-01-15T08:00:00Z')), '2026-01-15');
  // In July the offset is UTC−7.
  assert.equal(pacificDate(Date.parse('2026-07-15T06:59:00Z')), '2026-07-14');
  assert.equal(pacificDate(Date.parse('2026-07-15T07:00:00Z')), '2026-07-15');
});

test('Pacific midnight across both daylight-time switches', () => {
  assert.equal(pacificMidnight('2026-03-08').toISOString(), '2026-03-08T08:00:00.000Z');
  assert.equal(pacificMidnight('2026-03-09').toISOString(), '2026-03-09T07:00:00.000Z');
  assert.equal(pacificMidnight('2026-11-01').toISOString(), '2026-11-01T07:00:00.000Z');
  assert.equal(pacificMidnight('2026-11-02').toISOString(), '2026-11-02T08:00:00.000Z');
});

test('date arithmetic and validation', () => {
  assert.equal(addDays('2026-03-01', -1), '2026-02-28');
  assert.equal(addDays('2024-02-28', 1), '2024-02-29');
  assert.equal(daysBetween('2026-01-01', '2026-01-29'), 28);
  assert.equal(isValidDate('2026-02-29'), false);
  assert.equal(isValidDate('2026-2-1'), false);
  assert.equal(isValidDate('2024-02-29'), true);
});
