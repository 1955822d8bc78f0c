/**
 * The floor of a memory_get: the work any server answering it has to do, and nothing of the
 * gateway's. It reads the body and parses it, reads the row from the gateway's own SQLite file
 * with the store's statement, makes the record and the presented memory with the store's and
 * the tool's code, and encodes the answer with the wire's encoders, so its bytes are the
 * gateway's (the bench checks they are). It checks no key, no limit, no era claim, no
 * arguments, and has no tool dispatch or promise in its path. Beside the gateway and the bare
 * server it splits the gap: what the tool's work costs, and what the gateway's checks cost.
 *
 * DATA_DIR is the gateway's data directory; FLOOR_MEMORY_ID names a memory whose key this
 * server answers for; FLOOR_META is the 2026-07-28 result `_meta` as JSON.
 */
import { loadUws } from '../../gateway/http/uws-loader.ts';
import { LATEST_LEGACY_VERSION } from '../../gateway/mcp/protocol.ts';
import { encodeLegacyToolResult } from '../../gateway/mcp/wire/legacy.ts';
import { encodeModernToolResult } from '../../gateway/mcp/wire/modern.ts';
import { presentMemory } from '../../gateway/namespaces/memory/present.ts';
import { toRecord } from '../../gateway/namespaces/memory/store/common.ts';
import { ROW_COLUMNS, rowOf } from '../../gateway/namespaces/memory/store/sqlite-rows.ts';
import { openSqlite, sqlitePath } from '../../gateway/store/index.ts';
import { announce } from './ready.ts';

const dataDir = process.env.DATA_DIR;
const memoryId = process.env.FLOOR_MEMORY_ID;
const meta = process.env.FLOOR_META ?? '';
if (!dataDir || !memoryId) throw new Error('DATA_DIR and FLOOR_MEMORY_ID are required');

const db = openSqlite(sqlitePath(dataDir, 'memory'));
const { api_key_id: keyId } = db
  .prepare('SELECT api_key_id FROM memories WHERE public_id = ?')
  .get(memoryId) as {
  api_key_id: string;
};
const read = db
  .prepare(
    `SELECT ${ROW_COLUMNS} FROM memories m WHERE m.public_id = ? AND m.api_key_id = ? AND (m.expires_at IS NULL OR m.expires_at > ?)`,
  )
  .raw(true);

/** The JSON-RPC answer to one tools/call memory_get, in the era the version header names. */
function answer(body: Buffer, modern: boolean): string {
  const message = JSON.parse(body.toString('utf8')) as {
    id: number | string;
    params: { arguments: { id: string } };
  };
  const values = read.get(message.params.arguments.id, keyId, Date.now()) as unknown[];
  const output = presentMemory(toRecord(rowOf(values)));
  const result = { isError: false as const, text: JSON.stringify(output), structured: output };
  const encoded = modern ? encodeModernToolResult(result, meta) : encodeLegacyToolResult(result);
  return `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${encoded}}`;
}

const { loaded, failures } = loadUws();
if (!loaded) throw new Error(`no uWebSockets.js build loads: ${failures.join('; ')}`);
const app = loaded.uws.App();
app.any('/*', (res, req) => {
  const version = req.getHeader('mcp-protocol-version');
  const modern = version !== '' && version !== LATEST_LEGACY_VERSION;
  const chunks: Buffer[] = [];
  res.onAborted(() => {});
  res.onData((chunk, isLast) => {
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (!isLast) return;
    const text = answer(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), modern);
    res.cork(() => res.writeHeader('content-type', 'application/json').end(text));
  });
});
app.listen('127.0.0.1', 0, (socket) => {
  announce({ port: loaded.uws.us_socket_local_port(socket), build: loaded.build });
});
