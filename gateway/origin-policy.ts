const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/;

/**
 * A present Origin is admitted when the operator listed it, or when it is the gateway's own
 * loopback origin (Origin equals http://<Host> and Host is a loopback literal). A DNS
 * rebinding page always carries its own, non-loopback origin, so only same-origin loopback
 * callers (a local tool or the MCP Inspector on this port) pass without configuration.
 */
export function createOriginPolicy(
  allowedOrigins: string[],
): (origin: string, host: string | undefined) => boolean {
  const allowed = new Set(allowedOrigins);
  return (origin, host) => {
    if (allowed.has(origin)) return true;
    if (host === undefined || !LOOPBACK_HOST.test(host)) return false;
    return origin === `http://${host}`;
  };
}
