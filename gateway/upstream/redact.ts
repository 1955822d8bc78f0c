/**
 * Credentials must never reach a log line or a tool result. Two nets: every secret a namespace
 * loads is registered here and replaced wherever it appears, and shapes that carry credentials
 * (bearer tokens, token fields in JSON or forms, private keys, signed assertions) are masked
 * even when nobody registered them — an upstream error body may echo what we sent.
 */
const registered = new Set<string>();

/** Secrets shorter than this are not registered: masking "abc" everywhere would mangle text. */
const MIN_SECRET_LENGTH = 8;

export function registerSecret(value: string | undefined | null): void {
  if (typeof value === 'string' && value.length >= MIN_SECRET_LENGTH) registered.add(value);
}

const PATTERNS: Array<[RegExp, string]> = [
  [
    /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g,
    '[redacted private key]',
  ],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 [redacted]'],
  [
    /("?\b(?:access_token|refresh_token|id_token|client_secret|private_key|assertion|password|api_key|apikey|token)"?\s*[:=]\s*"?)([^"&\s,}]+)/gi,
    '$1[redacted]',
  ],
  // Three base64url segments: a JWT (signed assertion or id token).
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, '[redacted jwt]'],
];

export function redactText(text: string): string {
  let out = text;
  for (const secret of registered) {
    if (out.includes(secret)) out = out.split(secret).join('[redacted]');
  }
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** Redacts every string inside a JSON-like value (tool results pass through this). */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redactText(value) as T;
  if (Array.isArray(value)) return value.map((item) => redactDeep(item)) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = redactDeep(item);
    return out as T;
  }
  return value;
}
