/**
 * Agents ask their memory about "the user" in the third person ("Where does the user live
 * now?"), while what they stored is mostly the user's own words in the first person ("We
 * moved to Denver in March"). An embedder reads "the user" as content — a person called
 * "user" — and that pulls the query towards memories that talk about users, accounts and
 * usage. The query is therefore embedded in the voice the memories are written in: the
 * user becomes "I" / "me" / "my". Only the vector arm sees this; keyword matching ignores
 * "user" anyway (see QUERY_STOPWORDS in store/text.ts).
 */

/** Auxiliary verbs that change form when their subject becomes "I". */
const AUXILIARY: Record<string, string> = {
  does: 'do',
  did: 'did',
  is: 'am',
  was: 'was',
  has: 'have',
  had: 'had',
  can: 'can',
  could: 'could',
  will: 'will',
  would: 'would',
  should: 'should',
  might: 'might',
};

const OBJECT_BEFORE = new Set(
  'to for with about from by of at on in into than like tell give send show ask help remind'.split(' '),
);

function matchCase(template: string, word: string): string {
  return template[0] === template[0]?.toUpperCase() ? word[0]!.toUpperCase() + word.slice(1) : word;
}

/** The query as the user would have said it about themselves; unchanged when it names no user. */
export function firstPersonQuery(query: string): string {
  if (!/\busers?\b/i.test(query)) return query;
  let text = query
    // "the user's" / "user's" → "my"
    .replace(/\b(?:the\s+)?user[’']s\b/gi, (m) => matchCase(m, 'my'))
    // "does the user" → "do I"
    .replace(/\b([A-Za-z]+)\s+the\s+user\b/g, (m, verb: string) => {
      const aux = AUXILIARY[verb.toLowerCase()];
      if (aux) return `${matchCase(verb, aux)} I`;
      if (OBJECT_BEFORE.has(verb.toLowerCase())) return `${verb} me`;
      return m;
    });
  // "the user is/has/was" (subject first) → "I am/have/was"
  text = text
    .replace(/\bthe\s+user\s+is\b/gi, (m) => matchCase(m, 'I am'))
    .replace(/\bthe\s+user\s+has\b/gi, (m) => matchCase(m, 'I have'))
    .replace(/\bthe\s+user\b/gi, (m) => matchCase(m, 'I'));
  return text;
}

/**
 * Words with which a question asks for the present state of something: "Where does the
 * user live now?", "What car do they drive these days?". A fact that changed was stated
 * more than once, and such a question wants the latest statement.
 */
const NOW =
  /\b(?:now|nowadays|currently|current|presently|at present|these days|at the moment|at this point|as of today|anymore|still|latest|most recent(?:ly)?)\b/i;

export function asksAboutNow(query: string): boolean {
  return NOW.test(query);
}
