import assert from 'node:assert/strict';
import { test } from 'node:test';
import { statesChange } from '../../../gateway/namespaces/memory/updates.ts';

test('statements of a change are told from plain statements', () => {
  for (const text of [
    'We finally moved the standup to 10:30',
    'Sold the Civic last week, I am driving a Tesla now',
    'They changed my locker code, it is 9902',
    'I no longer eat meat',
    'Switched to the night shift',
  ])
    assert.equal(statesChange(text), true, text);
  for (const text of ['Standup is at 9:15 every day', 'I drive a Honda Civic', 'My locker code is 4471'])
    assert.equal(statesChange(text), false, text);
});
