/**
 * Baseline: the cheapest possible uWS answer, a fixed body with no parsing and no auth.
 * BENCH_BODY_FILE names a file holding the body (bytes the gateway answered, captured by the
 * bench); without it the body is the gateway's tools/list answer for BENCH_ERA.
 */
import { readFileSync } from 'node:fs';
import { wholeBody } from '../../gateway/http/engine.ts';
import { loadUws } from '../../gateway/http/uws-loader.ts';
import { compileNamespace } from '../../gateway/mcp/namespace.ts';
import { mountedDefinition, mountNamespace } from '../../gateway/mcp/namespace-mount.ts';
import { eventNamespace } from '../../gateway/namespaces/event/index.ts';
import { announce } from './ready.ts';

/** The gateway's own tools/list answer for BENCH_ERA (legacy or modern), id 1, encoded by its wire. */
async function toolsListBody(): Promise<Buffer> {
  const unused = { call: () => Promise.reject(new Error('unused')) };
  const namespace = compileNamespace(
    await mountedDefinition(mountNamespace(eventNamespace, {}, { broker: unused })),
  );
  const wire = process.env.BENCH_ERA === 'modern' ? namespace.modern : namespace.legacy;
  return Buffer.from(wholeBody(wire.toolsList(1, undefined).body));
}

const { loaded, failures } = loadUws();
if (!loaded) throw new Error(`no uWebSockets.js build loads: ${failures.join('; ')}`);
// Same bytes as the gateway's tools/list answer, so only the work around them differs.
const body = process.env.BENCH_BODY_FILE ? readFileSync(process.env.BENCH_BODY_FILE) : await toolsListBody();
const app = loaded.uws.App();
app.any('/*', (res) => {
  res.onAborted(() => {});
  res.onData((_chunk, isLast) => {
    if (isLast) res.cork(() => res.writeHeader('content-type', 'application/json').end(body));
  });
});
app.listen('127.0.0.1', 0, (socket) => {
  announce({ port: loaded.uws.us_socket_local_port(socket), build: loaded.build });
});
