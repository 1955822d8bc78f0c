/**
 * The module a worker thread starts with. A thread does not inherit the TypeScript loader of
 * the thread that made it, so when running from sources (`.ts`, under tsx) it starts through
 * a small `.mjs` shim that registers tsx first; compiled (`dist/`, plain node, no tsx
 * installed in production) it starts the emitted `.js` itself.
 */
export function threadEntry(callerUrl: string, module: string, sourceShim: string): URL {
  return callerUrl.endsWith('.ts') ? new URL(sourceShim, callerUrl) : new URL(`${module}.js`, callerUrl);
}
