/** Page scaffolding for the console: escaping, the layout, and the headers every page carries. */
import type { HttpResponse } from '../http/engine.ts';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Every value that reaches a page goes through here: text and attribute values alike. */
function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`]/g, (char) => ESCAPES[char] as string);
}

/** A fragment already built from escaped parts; the only way raw markup enters a page. */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

/** Tagged template: interpolations are escaped unless they are Html (or arrays of Html). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new Html(out);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.markup;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(value);
}

/**
 * Scripts and styles come only from the console's own files; no page may be framed, and
 * no Referer leaves a console page (key ids and paths stay private).
 */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
  'cache-control': 'no-store',
};

export interface PageOptions {
  title: string;
  signedInAs?: { email: string; csrfToken: string } | undefined;
  status?: number;
  headers?: Record<string, string>;
}

export function page(
  body: Html,
  { title, signedInAs, status = 200, headers = {} }: PageOptions,
): HttpResponse {
  const header = signedInAs
    ? html`<header><span class="brand">MCP gateway console</span>
        <form method="post" action="/console/sign-out" class="inline">
          <input type="hidden" name="csrf" value="${signedInAs.csrfToken}">
          <span class="who">${signedInAs.email}</span> <button type="submit">Sign out</button>
        </form></header>`
    : html`<header><span class="brand">MCP gateway console</span></header>`;
  const document = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · MCP gateway console</title>
<link rel="stylesheet" href="/console/static/console.css">
<script src="/console/static/console.js" defer></script></head>
<body>${header}<main>${body}</main></body></html>`;
  return {
    status,
    headers: { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS, ...headers },
    body: document.markup,
  };
}

export function redirect(location: string, headers: Record<string, string> = {}): HttpResponse {
  return { status: 303, headers: { location, ...SECURITY_HEADERS, ...headers } };
}

export function notice(kind: 'error' | 'info', message: string | undefined): Html {
  if (!message) return html``;
  return kind === 'error'
    ? html`<p class="error" role="alert">${message}</p>`
    : html`<p class="info" role="status">${message}</p>`;
}
