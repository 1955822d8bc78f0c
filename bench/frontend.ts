/**
 * Front end: authenticated tools/list and 401 rejections on our engines, next to a bare
 * uWS server and the SDK's stateless server, each loaded by autocannon from this process.
 */
import autocannon from 'autocannon';
import { startChild } from './child.ts';

export interface LoadResult {
  rps: number;
  /** Requests answered in the run. */
  requests: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

export async function load(
  url: string,
  headers: Record<string, string>,
  durationSeconds: number,
  connections = 64,
  body = TOOLS_LIST,
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    method: 'POST',
    headers,
    body,
    connections,
    pipelining: 1,
    duration: durationSeconds,
  });
  return {
    rps: Math.round(result.requests.average),
    requests: result.requests.total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export interface FrontendResults {
  toolsList: {
    rps: number;
    p99Ms: number;
    nodeEngineRps: number;
    nodeEngineP99Ms: number;
    uwsHelloRps: number;
    sdkStatelessRps: number;
    sdkStatelessP99Ms: number;
  };
  reject401: { rps: number; p99Ms: number; nodeEngineRps: number };
  engineBuild: string;
}

export async function benchFrontend(
  durationSeconds: number,
  log: (line: string) => void,
): Promise<FrontendResults> {
  const measure = async (entry: string, env: Record<string, string>, authorized: boolean | 'both') => {
    const child = await startChild(entry, env);
    try {
      const url = `http://127.0.0.1:${child.info.port}/event/mcp`;
      const key = String(child.info.key ?? '');
      await load(url, { ...MCP_HEADERS, 'x-api-key': key }, 1); // warm-up
      const ok = authorized ? await load(url, { ...MCP_HEADERS, 'x-api-key': key }, durationSeconds) : null;
      const refused =
        authorized === 'both'
          ? await load(
              url,
              { ...MCP_HEADERS, 'x-api-key': 'mcp_notregisterednotregisterednotreg' },
              durationSeconds,
            )
          : null;
      return { ok, refused, info: child.info };
    } finally {
      await child.stop();
    }
  };

  log('front end: gateway on uWS');
  const uws = await measure('bench/servers/gateway.ts', { HTTP_ENGINE: 'uws' }, 'both');
  log('front end: gateway on node:http');
  const node = await measure('bench/servers/gateway.ts', { HTTP_ENGINE: 'node' }, 'both');
  log('front end: bare uWS hello');
  const hello = await measure('bench/servers/uws-hello.ts', {}, true);
  log('front end: SDK stateless server');
  const sdk = await measure('bench/servers/sdk-stateless.ts', {}, true);

  for (const [name, run] of Object.entries({ uws, node, hello, sdk })) {
    if (run.ok && run.ok.non2xx > 0)
      throw new Error(`${name}: ${run.ok.non2xx} non-2xx answers to tools/list`);
  }
  return {
    toolsList: {
      rps: uws.ok!.rps,
      p99Ms: uws.ok!.p99Ms,
      nodeEngineRps: node.ok!.rps,
      nodeEngineP99Ms: node.ok!.p99Ms,
      uwsHelloRps: hello.ok!.rps,
      sdkStatelessRps: sdk.ok!.rps,
      sdkStatelessP99Ms: sdk.ok!.p99Ms,
    },
    reject401: { rps: uws.refused!.rps, p99Ms: uws.refused!.p99Ms, nodeEngineRps: node.refused!.rps },
    engineBuild: String(uws.info.build),
  };
}

const ratio = (ours: number, theirs: number) => Math.round((ours / theirs) * 100) / 100;

/** Table rows (measurement, ours, baseline, ratio) for the front end's own runs. */
export function frontendRows(front: FrontendResults): Array<[string, string, string, string]> {
  const { toolsList, reject401 } = front;
  return [
    [
      'tools/list rps (uWS engine)',
      `${toolsList.rps}`,
      `bare uWS ${toolsList.uwsHelloRps}`,
      `${ratio(toolsList.rps, toolsList.uwsHelloRps)}×`,
    ],
    [
      'tools/list rps (uWS engine)',
      `${toolsList.rps}`,
      `SDK stateless ${toolsList.sdkStatelessRps}`,
      `${ratio(toolsList.rps, toolsList.sdkStatelessRps)}×`,
    ],
    [
      'tools/list rps (node:http engine)',
      `${toolsList.nodeEngineRps}`,
      `uWS engine ${toolsList.rps}`,
      `${ratio(toolsList.nodeEngineRps, toolsList.rps)}×`,
    ],
    ['tools/list p99 ms', `${toolsList.p99Ms}`, `SDK stateless ${toolsList.sdkStatelessP99Ms}`, ''],
    [
      '401 rejections rps',
      `${reject401.rps}`,
      `bare uWS ${toolsList.uwsHelloRps}`,
      `${ratio(reject401.rps, toolsList.uwsHelloRps)}×`,
    ],
  ];
}
