/**
 * Words with which people say that a fact changed: "we finally moved the standup to 10:30",
 * "sold the Civic last week, driving a Tesla now", "they changed my locker code". A memory
 * that carries one is likely the newer value of something stated before, so a search may
 * let it lead its older statement from further behind than a plain newer memory (see
 * changedWithin in ranking.ts). The list is English usage, not fitted to any set: tense
 * and aspect markers of change, verbs of replacing, ending and moving, and words that
 * announce news.
 */
const CHANGE =
  /\b(?:now|nowadays|these days|from now on|anymore|any more|no longer|not any ?more|new|newly|changed?|changing|switch(?:ed|ing)?|mov(?:e|ed|ing)|sold|quit|stopped|dropped|gave up|replaced|instead|finally|ended up|turn(?:s|ed) out|actually|since then|update[ds]?|upgraded|pushed (?:it |everything )?back|rescheduled|postponed|cancel(?:l)?ed|went|became|started|starting|decided|settled on|after all)\b/i;

export function statesChange(content: string): boolean {
  return CHANGE.test(content);
}
