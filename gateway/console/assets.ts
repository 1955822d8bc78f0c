/** The console's only stylesheet and script, served from /console/static/ so the CSP can forbid inline code. */
import type { HttpResponse } from '../http/engine.ts';
import { SECURITY_HEADERS } from './html.ts';

const CSS = `:root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.45}
body{margin:0}header{display:flex;justify-content:space-between;align-items:center;padding:.6rem 1.2rem;border-bottom:1px solid #8884}
.brand{font-weight:600}main{max-width:68rem;margin:1.2rem auto;padding:0 1.2rem}
form.inline{display:inline}.who{margin-right:.5rem;opacity:.8}
fieldset{border:1px solid #8886;border-radius:6px;margin:0 0 1rem;padding:.8rem 1rem}
label{display:block;margin:.4rem 0 .15rem;font-weight:500}label.check{display:inline-flex;gap:.3rem;margin-right:1rem;font-weight:400}
input[type=text],input[type=email],input[type=password],input[type=date]{width:100%;max-width:28rem;padding:.35rem;font:inherit}
button{font:inherit;padding:.35rem .9rem;cursor:pointer}
table{border-collapse:collapse;width:100%;font-size:.92rem}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #8884;vertical-align:top}
code,output,pre{font-family:ui-monospace,monospace}output#new-key{display:inline-block;padding:.4rem .6rem;border:2px solid #2a7;border-radius:4px;word-break:break-all}
pre{background:#8881;padding:.8rem;overflow:auto}.error{color:#c22;font-weight:500}.info{color:#276}
.muted{opacity:.7}.revoked{opacity:.55}`;

const JS = `document.addEventListener('click', (event) => {
  const button = event.target.closest('button[data-copy]');
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(() => { button.textContent = 'Copied'; });
});`;

const ASSETS: Record<string, { type: string; body: string }> = {
  '/console/static/console.css': { type: 'text/css; charset=utf-8', body: CSS },
  '/console/static/console.js': { type: 'text/javascript; charset=utf-8', body: JS },
};

export function staticAsset(path: string): HttpResponse | undefined {
  const asset = ASSETS[path];
  if (!asset) return undefined;
  return {
    status: 200,
    headers: { ...SECURITY_HEADERS, 'cache-control': 'public, max-age=300', 'content-type': asset.type },
    body: asset.body,
  };
}
