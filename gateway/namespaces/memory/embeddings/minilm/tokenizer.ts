/**
 * BERT's uncased WordPiece tokenizer, driven by a Hugging Face tokenizer.json (its
 * BertNormalizer, BertPreTokenizer and WordPiece model). Behaviour follows the `tokenizers`
 * library, which is what produced the ids the model was trained on: a different split
 * silently degrades every vector without any error, so the rules are kept exact.
 */

export interface TokenizerJson {
  normalizer?: { type?: string; lowercase?: boolean; strip_accents?: boolean | null };
  model: {
    type: string;
    vocab: Record<string, number>;
    unk_token: string;
    continuing_subword_prefix: string;
    max_input_chars_per_word: number;
  };
}

export interface Encoded {
  /** [CLS] pieces… [SEP]; never longer than the tokenizer's maxTokens. */
  ids: number[];
}

const CONTROL = /\p{C}/u;
const WHITESPACE = /\s/u;
const NONSPACING_MARK = /\p{Mn}/gu;
const UNICODE_PUNCTUATION = /\p{P}/u;

/** The CJK ideograph blocks BERT splits into single characters (not Hangul or kana). */
function isCjk(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

/** BERT counts all ASCII symbols as punctuation ($, +, <, ^, `…), beside Unicode's P* classes. */
function isPunctuation(ch: string, cp: number): boolean {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126))
    return true;
  return UNICODE_PUNCTUATION.test(ch);
}

export class WordPieceTokenizer {
  private readonly vocab: Map<string, number>;
  private readonly unk: number;
  private readonly prefix: string;
  private readonly maxWordChars: number;
  private readonly lowercase: boolean;
  private readonly stripAccents: boolean;
  readonly cls: number;
  readonly sep: number;

  constructor(
    json: TokenizerJson,
    /** sentence-transformers truncates at the model's max_seq_length, [CLS] and [SEP] included. */
    readonly maxTokens = 256,
  ) {
    if (json.model.type !== 'WordPiece')
      throw new Error(`expected a WordPiece tokenizer, got ${json.model.type}`);
    this.vocab = new Map(Object.entries(json.model.vocab));
    const id = (token: string) => {
      const found = this.vocab.get(token);
      if (found === undefined) throw new Error(`tokenizer.json has no ${token} token`);
      return found;
    };
    this.unk = id(json.model.unk_token);
    this.cls = id('[CLS]');
    this.sep = id('[SEP]');
    this.prefix = json.model.continuing_subword_prefix;
    this.maxWordChars = json.model.max_input_chars_per_word;
    this.lowercase = json.normalizer?.lowercase ?? true;
    // BertNormalizer: an unset strip_accents follows lowercase (uncased models strip them).
    this.stripAccents = json.normalizer?.strip_accents ?? this.lowercase;
  }

  /**
   * Literal "[SEP]" or "[CLS]" in the text stays text (split as punctuation and letters):
   * stored memories are untrusted and must not place control tokens.
   */
  encode(text: string): Encoded {
    const budget = this.maxTokens - 2;
    const ids = [this.cls];
    for (const word of this.words(text)) {
      for (const piece of this.wordPieces(word)) {
        if (ids.length > budget) break;
        ids.push(piece);
      }
      // Long memories stop here: the rest would be truncated away anyway.
      if (ids.length > budget) break;
    }
    ids.push(this.sep);
    return { ids };
  }

  /** The word pieces of `text`, without [CLS] or [SEP], stopping once `limit` are found. */
  pieces(text: string, limit: number): number[] {
    const ids: number[] = [];
    for (const word of this.words(text)) {
      for (const piece of this.wordPieces(word)) {
        if (ids.length >= limit) return ids;
        ids.push(piece);
      }
    }
    return ids;
  }

  /**
   * A BERT sentence pair, as a cross-encoder is fed: [CLS] a [SEP] b [SEP], token types 0
   * up to the first [SEP] and 1 after it. Past `maxTokens`, the longer side loses a token
   * at a time (the `tokenizers` library's longest_first truncation), so a long memory never
   * pushes out a short query.
   */
  encodePair(a: string, b: string, maxTokens = this.maxTokens): { ids: number[]; typeIds: number[] } {
    const budget = maxTokens - 3;
    const first = this.pieces(a, budget);
    const second = this.pieces(b, budget);
    while (first.length + second.length > budget) {
      if (first.length > second.length) first.pop();
      else second.pop();
    }
    const ids = [this.cls, ...first, this.sep, ...second, this.sep];
    const typeIds = ids.map((_, i) => (i < first.length + 2 ? 0 : 1));
    return { ids, typeIds };
  }

  /** Normalised words and single punctuation marks, in order (normaliser + pre-tokeniser). */
  *words(text: string): Generator<string> {
    let word = '';
    for (const ch of this.normalise(text)) {
      const cp = ch.codePointAt(0)!;
      if (ch === ' ') {
        if (word) yield word;
        word = '';
      } else if (isPunctuation(ch, cp)) {
        if (word) yield word;
        word = '';
        yield ch;
      } else {
        word += ch;
      }
    }
    if (word) yield word;
  }

  private normalise(text: string): string {
    let out = '';
    for (const ch of text) {
      const cp = ch.codePointAt(0)!;
      // Tab, newline and return are spaces; other controls (and U+FEFF, which /\s/ would
      // call a space) are dropped first, so "a\u{feff}b" stays one word as in `tokenizers`.
      if (ch === '\t' || ch === '\n' || ch === '\r') out += ' ';
      else if (cp === 0xfffd || CONTROL.test(ch)) continue;
      else if (WHITESPACE.test(ch)) out += ' ';
      else if (isCjk(cp)) out += ` ${ch} `;
      else out += ch;
    }
    if (this.stripAccents) out = out.normalize('NFD').replace(NONSPACING_MARK, '');
    if (this.lowercase) {
      // Per character, as `tokenizers` does: String#toLowerCase would apply the Greek
      // final-sigma rule and give ids the model never saw.
      let lower = '';
      for (const ch of out) lower += ch.toLowerCase();
      out = lower;
    }
    return out;
  }

  /** Greedy longest-match-first; a word with any unmatched part is one [UNK]. */
  private wordPieces(word: string): number[] {
    const chars = Array.from(word);
    if (chars.length > this.maxWordChars) return [this.unk];
    const pieces: number[] = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found: number | undefined;
      while (end > start) {
        const piece = chars.slice(start, end).join('');
        found = this.vocab.get(start > 0 ? this.prefix + piece : piece);
        if (found !== undefined) break;
        end--;
      }
      if (found === undefined) return [this.unk];
      pieces.push(found);
      start = end;
    }
    return pieces;
  }
}
