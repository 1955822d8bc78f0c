import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asksAboutNow, firstPersonQuery } from '../../../gateway/namespaces/memory/query-voice.ts';

test('an agent’s third-person question is embedded in the user’s own voice', () => {
  const cases: [string, string][] = [
    ['Which city does the user live in now?', 'Which city do I live in now?'],
    ["When is the user's sister's wedding?", "When is my sister's wedding?"],
    ['The user’s dog is called what?', 'My dog is called what?'],
    ['What is the user allergic to?', 'What am I allergic to?'],
    ['Did the user mention a dentist?', 'Did I mention a dentist?'],
    ['What gift should I buy for the user?', 'What gift should I buy for me?'],
    ['The user has how many kids?', 'I have how many kids?'],
    ['What does the user prefer for breakfast?', 'What do I prefer for breakfast?'],
  ];
  for (const [asked, embedded] of cases) assert.equal(firstPersonQuery(asked), embedded, asked);
});

test('a query that names no user, or users in general, keeps its words', () => {
  for (const query of [
    'What did the assistant recommend?',
    'deploy steps for staging',
    'user-facing errors',
  ]) {
    assert.equal(firstPersonQuery(query), query);
  }
  assert.equal(
    firstPersonQuery('How does the user feel about users of Vim?'),
    'How do I feel about users of Vim?',
  );
});

test('a question about the present is recognised, one about a fact is not', () => {
  for (const query of [
    'Which city does the user live in now?',
    'What car is the user currently driving?',
    'Who coaches them these days?',
    'What phone does the user have at the moment?',
    'Is the user still vegetarian?',
  ]) {
    assert.equal(asksAboutNow(query), true, query);
  }
  for (const query of [
    'When did the user move to Denver?',
    'What is the knowledge cutoff?',
    'snowboard rental',
  ]) {
    assert.equal(asksAboutNow(query), false, query);
  }
});
