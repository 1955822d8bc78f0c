/**
 * A value's JSON and that JSON quoted as a JSON string, written in one walk. A 2025-era tool
 * result carries the structured output twice, as `structuredContent` and quoted as the text
 * content; JSON.stringify over the output and again over its text escaped every character
 * twice, and escaping is most of what serializing costs.
 *
 * Strings are escaped once per distinct text: both encodings of a string are remembered by
 * the string itself. Escaping is a function of the text alone, so a remembered encoding is
 * exactly what JSON.stringify writes for it; nothing is kept about which answer it was in.
 * Capabilities answers repeat most of their strings (settings, notes, rules, key names).
 */

/** A piece of JSON and the same piece escaped as inside a JSON string (without the quotes). */
export interface JsonTwice {
  json: string;
  escaped: string;
}

/** Strings (and property names) remembered at most; a set is emptied when full, so churning strings cost no memory. */
const REMEMBERED = 1024;
const strings = new Map<string, JsonTwice>();

/** JSON.stringify(text) without its quotes: a JSON string's inside. */
export function escapedOf(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

function stringTwice(text: string): JsonTwice {
  const known = strings.get(text);
  if (known !== undefined) return known;
  const json = JSON.stringify(text);
  const pair = { json, escaped: escapedOf(json) };
  if (strings.size >= REMEMBERED) strings.clear();
  strings.set(text, pair);
  return pair;
}

/** A property name with what comes before it and the colon after: `{"name":` first, `,"name":` after. */
interface KeyTwice {
  first: JsonTwice;
  next: JsonTwice;
}
const keys = new Map<string, KeyTwice>();

/**
 * A new flat copy of a text. What is kept and spliced into every answer must not be a rope
 * itself, or each answer walks all its pieces again when it is written out. The texts kept
 * here are JSON or escaped JSON, in which JSON.stringify has escaped any lone surrogate, so
 * going through UTF-8 gives back the same text.
 */
function flat(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

function keyTwice(key: string): KeyTwice {
  const known = keys.get(key);
  if (known !== undefined) return known;
  const json = JSON.stringify(key);
  const escaped = escapedOf(json);
  const name = {
    first: { json: flat(`{${json}:`), escaped: flat(`{${escaped}:`) },
    next: { json: flat(`,${json}:`), escaped: flat(`,${escaped}:`) },
  };
  if (keys.size >= REMEMBERED) keys.clear();
  keys.set(key, name);
  return name;
}

/**
 * Writes values into two texts at once, in as few pieces as it can: the texts are ropes
 * until written out, and every piece costs again when they are flattened. Escaping works character by character, and every
 * piece written is either ASCII punctuation or a whole JSON string (in which JSON.stringify
 * has already escaped any lone surrogate), so the escaped pieces joined are the escaped whole.
 */
export class TwiceWriter {
  json = '';
  escaped = '';

  /** Appends text that is the same in both (ASCII punctuation, numbers, literals). */
  private plain(text: string): void {
    this.json += text;
    this.escaped += text;
  }

  private pair(pair: JsonTwice): void {
    this.json += pair.json;
    this.escaped += pair.escaped;
  }

  /** Appends a value as JSON.stringify writes it; false when JSON.stringify writes nothing (undefined, a function). */
  value(value: unknown): boolean {
    switch (typeof value) {
      case 'string':
        this.pair(stringTwice(value));
        return true;
      case 'number':
        this.plain(Number.isFinite(value) ? String(value) : 'null');
        return true;
      case 'boolean':
        this.plain(value ? 'true' : 'false');
        return true;
      case 'undefined':
      case 'function':
      case 'symbol':
        return false;
      case 'object':
        if (value !== null) return this.object(value);
        this.plain('null');
        return true;
      default:
        // A bigint: JSON.stringify throws its own TypeError.
        return this.whole(value);
    }
  }

  private object(value: object): boolean {
    const array = Array.isArray(value);
    const prototype = Object.getPrototypeOf(value);
    // Anything JSON.stringify treats specially (toJSON, Dates, boxed primitives, maps) is
    // written by it, then escaped.
    if ('toJSON' in value || (!array && prototype !== Object.prototype && prototype !== null))
      return this.whole(value);
    if (Object.isFrozen(value) && !changing.has(value)) {
      this.pair(frozenTwice(value, array));
      return true;
    }
    if (array) this.array(value as unknown[]);
    else this.record(value as Record<string, unknown>);
    return true;
  }

  array(value: readonly unknown[]): void {
    this.plain('[');
    for (let index = 0; index < value.length; index += 1) {
      if (index > 0) this.plain(',');
      if (!this.value(value[index])) this.plain('null');
    }
    this.plain(']');
  }

  record(value: Record<string, unknown>): void {
    let first = true;
    for (const key of Object.keys(value)) {
      const item = value[key];
      // JSON.stringify leaves out a property whose value it cannot write.
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      const json = this.json.length;
      const escaped = this.escaped.length;
      const name = keyTwice(key);
      this.pair(first ? name.first : name.next);
      if (this.value(item)) first = false;
      else {
        // Only a toJSON that answers undefined gets here.
        this.json = this.json.slice(0, json);
        this.escaped = this.escaped.slice(0, escaped);
      }
    }
    this.plain(first ? '{}' : '}');
  }

  private whole(value: unknown): boolean {
    const json = JSON.stringify(value);
    if (json === undefined) return false;
    this.pair({ json, escaped: escapedOf(json) });
    return true;
  }
}

/**
 * Encodings of deep-frozen plain data, kept with the object itself (a WeakMap: they go when
 * it goes). Such an object cannot change: its properties are frozen data (no getters), its
 * prototype is fixed, and every object inside is kept here too. A namespace's fixed parts
 * (the capabilities catalogue, its error codes, a rule that holds for the process) are
 * frozen once and then cost one lookup per answer.
 */
const fixed = new WeakMap<object, JsonTwice>();
/** Frozen objects that may still change (a getter, or something unfrozen inside): written every time. */
const changing = new WeakSet<object>();

function frozenTwice(value: object, array: boolean): JsonTwice {
  const known = fixed.get(value);
  if (known !== undefined) return known;
  const writer = new TwiceWriter();
  if (array) writer.array(value as unknown[]);
  else writer.record(value as Record<string, unknown>);
  if (!isFixedData(value)) {
    changing.add(value);
    return { json: writer.json, escaped: writer.escaped };
  }
  const pair = { json: flat(writer.json), escaped: flat(writer.escaped) };
  fixed.set(value, pair);
  return pair;
}

/** Frozen data all the way down: checked once per object, after its insides were written (and kept if fixed). */
function isFixedData(value: object): boolean {
  for (const key of Reflect.ownKeys(value)) {
    const property = Object.getOwnPropertyDescriptor(value, key)!;
    if (!('value' in property)) return false;
    const inside = property.value as unknown;
    if (typeof inside === 'object' && inside !== null && !fixed.has(inside)) return false;
  }
  return true;
}

/** `value`'s JSON.stringify text and that text's own JSON.stringify, the quoted one. */
export function jsonTwice(value: unknown): { json: string; quoted: string } {
  const writer = new TwiceWriter();
  writer.value(value);
  return { json: writer.json, quoted: `"${writer.escaped}"` };
}
