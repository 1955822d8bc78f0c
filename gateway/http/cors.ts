/**
 * CORS for the browser origins an operator lists in MCP_ALLOWED_ORIGINS. A preflight
 * (OPTIONS with Access-Control-Request-Method) carries no key, so it is answered before
 * authentication, for listed origins on MCP routes only; every answer to a listed origin
 * carries the headers a browser needs to read it. Other origins see no change.
 */
import type { HttpResponse, RequestHandler } from './engine.ts';

/** Request headers an MCP client in a browser sends. */
export const CORS_ALLOWED_HEADERS =
  'X-API-Key, Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name';
const PREFLIGHT_MAX_AGE_S = '600';

export function withCors(
  inner: RequestHandler,
  allowedOrigins: readonly string[],
  isMcpRoute: (path: string) => boolean,
): RequestHandler {
  const allowed = new Set(allowedOrigins);
  if (allowed.size === 0) return inner;
  return async (context) => {
    const origin = context.head.headers.origin;
    if (origin === undefined || !allowed.has(origin)) return inner(context);
    const cors = { 'access-control-allow-origin': origin, vary: 'Origin' };
    const { head } = context;
    if (
      head.method === 'OPTIONS' &&
      head.headers['access-control-request-method'] !== undefined &&
      isMcpRoute(head.path)
    ) {
      return {
        status: 204,
        headers: {
          ...cors,
          'access-control-allow-methods': 'POST, OPTIONS',
          'access-control-allow-headers': CORS_ALLOWED_HEADERS,
          'access-control-max-age': PREFLIGHT_MAX_AGE_S,
        },
      };
    }
    const response: HttpResponse = await inner(context);
    return { ...response, headers: { ...response.headers, ...cors } };
  };
}
