/**
 * What a key may do, and the one place that decides it. Checked by the gateway before any
 * tool runs, so a namespace never sees a refused call; tools/list uses the same rules so a
 * key is shown only what it may call.
 */
import { z } from 'zod';

const patternList = z.array(z.string().min(1).max(249)).max(50);

/**
 * Keys minted before scopes existed have `{}` stored: they parse to full access, which is
 * what they had. New keys from the console always store every field.
 */
export const keyScopesSchema = z.object({
  /** Namespaces the key may use; "*" allows every namespace, including ones mounted later. */
  namespaces: z.array(z.string().min(1).max(64)).max(50).default(['*']),
  /** Only tools annotated readOnlyHint: true. */
  readOnly: z.boolean().default(false),
  /** Topic patterns for the event namespace; "*" matches any run of characters. */
  publishTopics: patternList.default(['*']),
  consumeTopics: patternList.default(['*']),
});

export type KeyScopes = z.output<typeof keyScopesSchema>;

export const FULL_SCOPES: KeyScopes = Object.freeze({
  namespaces: ['*'],
  readOnly: false,
  publishTopics: ['*'],
  consumeTopics: ['*'],
}) as KeyScopes;

export function parseStoredScopes(json: string | null | undefined): KeyScopes {
  if (!json) return { ...FULL_SCOPES };
  const parsed = keyScopesSchema.safeParse(JSON.parse(json));
  // A row we cannot read grants nothing rather than everything.
  return parsed.success
    ? parsed.data
    : { namespaces: [], readOnly: true, publishTopics: [], consumeTopics: [] };
}

export type Decision = { ok: true } | { ok: false; missingScope: string; message: string };

const ALLOWED: Decision = { ok: true };

function refuse(missingScope: string, why: string): Decision {
  return {
    ok: false,
    missingScope,
    message: `Refused: this API key lacks the scope ${missingScope}. ${why} Ask the key's owner for a key with that scope (console at /console).`,
  };
}

/** Glob with "*" only; everything else is literal. Topic names cannot contain "*", so no escape is needed. */
export function topicMatches(pattern: string, topic: string): boolean {
  if (pattern === '*') return true;
  const parts = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`).test(topic);
}

export function namespaceAllowed(scopes: KeyScopes, namespace: string): boolean {
  return scopes.namespaces.includes('*') || scopes.namespaces.includes(namespace);
}

export function authorizeNamespace(scopes: KeyScopes, namespace: string): Decision {
  if (namespaceAllowed(scopes, namespace)) return ALLOWED;
  const allowed = scopes.namespaces.length > 0 ? scopes.namespaces.join(', ') : 'none';
  return refuse(`namespace:${namespace}`, `It may use these namespaces: ${allowed}.`);
}

export interface ToolFacts {
  name: string;
  annotations: { readOnlyHint?: boolean };
}

/** Namespace and read-only rules: everything knowable before the arguments are parsed. */
export function authorizeTool(scopes: KeyScopes, namespace: string, tool: ToolFacts): Decision {
  const byNamespace = authorizeNamespace(scopes, namespace);
  if (!byNamespace.ok) return byNamespace;
  if (scopes.readOnly && tool.annotations.readOnlyHint !== true) {
    return refuse('read-write', `It is read-only, and ${tool.name} is not a read-only tool.`);
  }
  return ALLOWED;
}

export function toolVisible(scopes: KeyScopes, namespace: string, tool: ToolFacts): boolean {
  return authorizeTool(scopes, namespace, tool).ok;
}

/** Which topic patterns govern an event tool's `topic` argument; undefined when none do. */
function topicRule(toolName: string): 'publish' | 'consume' | undefined {
  if (toolName === 'event_publish' || toolName === 'event_create_topic' || toolName === 'event_delete_topic')
    return 'publish';
  if (toolName === 'event_consume') return 'consume';
  return undefined;
}

/** Argument-level rules (event topics), applied once the arguments are parsed. */
export function authorizeArguments(
  scopes: KeyScopes,
  namespace: string,
  toolName: string,
  args: unknown,
): Decision {
  if (namespace !== 'event') return ALLOWED;
  const rule = topicRule(toolName);
  if (!rule) return ALLOWED;
  const patterns = rule === 'publish' ? scopes.publishTopics : scopes.consumeTopics;
  if (patterns.includes('*')) return ALLOWED;
  const topic = (args as { topic?: unknown } | null)?.topic;
  const listed = patterns.length > 0 ? patterns.join(', ') : 'none';
  if (typeof topic !== 'string') {
    // The default topic is a server setting the key's owner may not know: limited keys name topics.
    return refuse(
      `event:${rule}:<default topic>`,
      `It may ${rule} only on topics matching ${listed}; name the topic explicitly.`,
    );
  }
  if (patterns.some((pattern) => topicMatches(pattern, topic))) return ALLOWED;
  return refuse(`event:${rule}:${topic}`, `It may ${rule} only on topics matching ${listed}.`);
}

/** Reads the console's comma- or whitespace-separated topic pattern field. */
export function parsePatternField(raw: string): string[] {
  return raw
    .split(/[\s,]+/)
    .map((item) => item.trim())
    .filter(Boolean);
}

const PATTERN_SHAPE = /^[a-zA-Z0-9._*-]{1,249}$/;

export function invalidPatterns(patterns: string[]): string[] {
  return patterns.filter((pattern) => !PATTERN_SHAPE.test(pattern));
}

/** Short human description for listings: "event, memory · read-only · publish orders.* · consume *". */
export function describeScopes(scopes: KeyScopes): string {
  const parts = [scopes.namespaces.includes('*') ? 'all namespaces' : scopes.namespaces.join(', ') || 'none'];
  parts.push(scopes.readOnly ? 'read-only' : 'read-write');
  if (namespaceAllowed(scopes, 'event')) {
    parts.push(`publish ${scopes.publishTopics.join(' ') || 'none'}`);
    parts.push(`consume ${scopes.consumeTopics.join(' ') || 'none'}`);
  }
  return parts.join(' · ');
}
