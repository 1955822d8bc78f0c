import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { otelApi } from '../shared/tracing.ts';
import type { ApiKeyAuthenticator, AuthOutcome } from './auth/api-key-auth.ts';
import { withCors } from './http/cors.ts';
import type { HttpResponse, RequestContext, RequestHandler } from './http/engine.ts';
import type { RateGate } from './limits/rate-gate.ts';
import type { AccessHooks, CallDescription } from './mcp/access.ts';
import { routeFromHeaders } from './mcp/classify.ts';
import { type CallNote, emptyNote, handleMcpPost, type McpPost, refusalResponse } from './mcp/handle-post.ts';
import { checkMediaTypes } from './mcp/media-types.ts';
import type { CompiledNamespace, NamespaceRoute } from './mcp/namespace.ts';
import { bodyText } from './mcp/unicode.ts';
import { outcomeOfStatus, type RequestObserver, STORE_UNAVAILABLE } from './ops/observer.ts';
import { endRequestSpan, startRequestSpan, withActiveSpan } from './ops/tracing.ts';
import { createOriginPolicy } from './origin-policy.ts';
import { StateStoreUnavailableError } from './store/unreachable.ts';

export interface AppOptions {
  authenticator: ApiKeyAuthenticator;
  /** Each namespace's route; a namespace is compiled by its first request. */
  namespaces: NamespaceRoute[];
  allowedOrigins: string[];
  /** MCP_MAX_BODY_BYTES, quoted in the 413 answer. */
  maxBodyBytes: number;
  log: Logger;
  /** The /console pages: served before the key check, never on MCP routes. */
  console?: RequestHandler;
  /** Per-key access rules; without them every authenticated key may call everything. */
  access?: AccessHooks;
  /** Per-key rate limits; without it no request is rate-limited. */
  rateGate?: RateGate;
  /** Hears every routed MCP request and every refused key (metrics, audit trail). */
  observer?: RequestObserver;
  /** A server span per routed MCP request; absent when tracing is off (no SDK loaded). */
  tracer?: Tracer;
}

type Admitted = Extract<AuthOutcome, { ok: true }>;

const JSON_HEADERS = { 'content-type': 'application/json' };

function jsonError(
  status: number,
  error: string,
  message: string,
  extra: Record<string, string> = {},
): HttpResponse {
  return { status, headers: { ...JSON_HEADERS, ...extra }, body: JSON.stringify({ error, message }) };
}

const HEALTHY: HttpResponse = { status: 200, headers: JSON_HEADERS, body: '{"status":"ok"}' };

const UNAUTHORIZED_MESSAGES: Record<Exclude<AuthOutcome, { ok: true }>['reason'], string> = {
  missing: 'Send a registered API key in the X-API-Key header.',
  malformed: 'The X-API-Key header is not a well-formed key (keys look like mcp_...).',
  unregistered: 'The API key in X-API-Key is not registered.',
  revoked: 'The API key in X-API-Key has been revoked.',
  expired: 'The API key in X-API-Key has expired; create a new one in the console.',
  rotated: 'The API key in X-API-Key was replaced by rotation and its grace period is over; use the new key.',
  owner_disabled: 'The API key in X-API-Key belongs to a disabled account.',
};

function errorCodeOfStatus(status: number): string | null {
  if (status === 429) return 'rate_limited';
  return status >= 400 ? `http_${status}` : null;
}

let requestCounter = 0;
const requestIdPrefix = `${process.pid.toString(36)}-${Date.now().toString(36)}`;

/** What the router needs on every request, gathered once when the app is built. */
interface Router {
  routes: Map<string, NamespaceRoute>;
  originAllowed: ReturnType<typeof createOriginPolicy>;
  tooLargeMessage: string;
  authenticator: ApiKeyAuthenticator;
  log: Logger;
  consolePages: RequestHandler | undefined;
  access: AccessHooks;
  rateGate: RateGate | undefined;
  observer: RequestObserver | undefined;
  tracer: Tracer | undefined;
}

/**
 * The whole router. The key check is the first thing every request meets, /healthz alone
 * excepted, so a namespace mounted later is covered without touching this code. Paths are
 * compared exactly as sent (never decoded or normalised), so encodings, doubled or
 * trailing slashes and case changes simply find no route, after authentication.
 */
export function createApp({
  authenticator,
  namespaces,
  allowedOrigins,
  maxBodyBytes,
  log,
  console: consolePages,
  access = {},
  rateGate,
  observer,
  tracer,
}: AppOptions): RequestHandler {
  const router: Router = {
    routes: new Map(namespaces.map((namespace) => [`/${namespace.name}/mcp`, namespace])),
    originAllowed: createOriginPolicy(allowedOrigins),
    tooLargeMessage:
      `The request body is over this gateway's limit of ${maxBodyBytes} bytes (MCP_MAX_BODY_BYTES). ` +
      'Send less per call: for event_publish, split a large value into several messages or publish a reference (a URL or id) to data stored elsewhere.',
    authenticator,
    log,
    consolePages,
    access,
    rateGate,
    observer,
    tracer,
  };
  const handle = (context: RequestContext): Promise<HttpResponse> => routeRequest(router, context);
  return withCors(handle, allowedOrigins, (path) => router.routes.has(path));
}

/** Health and console first, then the key check, then the MCP route's own checks. */
async function routeRequest(router: Router, context: RequestContext): Promise<HttpResponse> {
  const { head } = context;
  if (head.path === '/healthz' && (head.method === 'GET' || head.method === 'HEAD')) return HEALTHY;
  if (router.consolePages && (head.path === '/console' || head.path.startsWith('/console/'))) {
    // Sign-in logs the address after reading the form: read it while the request is live.
    readAddresses(head);
    return router.consolePages(context);
  }

  const verdict = router.authenticator.authenticate(head.headers['x-api-key']);
  // A refusal after a key lookup that waited still names the client, even if it left meanwhile.
  if (verdict instanceof Promise) readAddresses(head);
  let auth: AuthOutcome;
  try {
    auth = verdict instanceof Promise ? await verdict : verdict;
  } catch (error) {
    if (error instanceof StateStoreUnavailableError) return storeUnavailable(router, head, error);
    throw error;
  }
  if (!auth.ok) return refuseKey(router, head, auth.reason);

  if (head.path === '/healthz')
    return jsonError(405, 'method_not_allowed', 'Use GET /healthz.', { allow: 'GET, HEAD' });
  const namespace = router.routes.get(head.path);
  if (!namespace) return jsonError(404, 'not_found', `No route ${head.method} ${head.path.slice(0, 200)}.`);

  const origin = head.headers.origin;
  if (origin !== undefined && !router.originAllowed(origin, head.headers.host)) {
    return jsonError(403, 'forbidden_origin', 'This Origin is not allowed; see MCP_ALLOWED_ORIGINS.');
  }
  if (head.method !== 'POST') {
    return jsonError(
      405,
      'method_not_allowed',
      'This stateless MCP endpoint takes one JSON-RPC message per POST; GET streams and DELETE sessions are not offered.',
      { allow: 'POST' },
    );
  }

  const refusedMedia = checkMediaTypes(head.headers);
  if (refusedMedia) return refusedMedia;
  if (!router.observer && !router.tracer) return serveMcp(router, context, namespace, auth, undefined);
  return observed(router, context, namespace, auth, router.observer);
}

/** The route's first compile; undefined (logged) when it failed, and the next request tries again. */
async function compiled(router: Router, route: NamespaceRoute): Promise<CompiledNamespace | undefined> {
  try {
    return await route.compile();
  } catch (error) {
    router.log.error({ err: error, namespace: route.name }, `namespace ${route.name} could not be loaded`);
    return undefined;
  }
}

function namespaceUnavailable(route: NamespaceRoute): HttpResponse {
  return jsonError(
    503,
    'namespace_unavailable',
    `The ${route.name} namespace could not be loaded (the gateway log says why); retry shortly, or report it.`,
    { 'retry-after': '1' },
  );
}

/**
 * Reads the request's addresses now: engines work them out on first read, and only while
 * the request is live (see AddressedHead), so code that records them after waiting reads
 * them before it waits.
 */
function readAddresses(head: RequestContext['head']): void {
  void head.clientAddress;
}

/**
 * The key could not be looked up because the state store did not answer: 503 with
 * Retry-After, naming the store, so clients and load balancers retry instead of reading a
 * 500 as a bug. Logged without the key.
 */
function storeUnavailable(
  router: Router,
  head: RequestContext['head'],
  error: StateStoreUnavailableError,
): HttpResponse {
  const cause = error.cause as { code?: string; message?: string } | undefined;
  router.log.warn(
    {
      path: head.path.slice(0, 200),
      store: error.store,
      cause: cause?.code ?? cause?.message?.slice(0, 120),
    },
    'key lookup failed: state store unavailable',
  );
  return {
    status: 503,
    headers: { ...JSON_HEADERS, 'retry-after': String(STORE_RETRY_AFTER_S) },
    body: JSON.stringify({
      error: 'store_unavailable',
      store: error.store,
      message: `The ${error.store === 'postgres' ? 'Postgres' : 'SQLite'} state store did not answer the API key lookup; retry in a few seconds.`,
    }),
  };
}

/** A Postgres restart with crash recovery took about a second here; two leave room for it. */
const STORE_RETRY_AFTER_S = 2;

/** Logs and reports a request whose key was refused, and answers 401. */
function refuseKey(
  router: Router,
  head: RequestContext['head'],
  reason: Exclude<AuthOutcome, { ok: true }>['reason'],
): HttpResponse {
  router.log.debug({ path: head.path.slice(0, 200), reason, remote: head.clientAddress }, 'refused');
  router.observer?.refused(
    {
      at: Date.now(),
      namespace: router.routes.get(head.path)?.name ?? null,
      method: head.headers['mcp-method']?.slice(0, 100) ?? null,
      tool: null,
      knownTool: false,
      outcome: 'denied',
      errorCode: `unauthorized_${reason}`,
      status: 401,
      keyId: null,
      ownerId: null,
      clientAddress: head.clientAddress,
      peerAddress: head.remoteAddress,
      seconds: 0,
      traceId: null,
    },
    reason,
  );
  return jsonError(401, 'unauthorized', UNAUTHORIZED_MESSAGES[reason]);
}

/** Serves an MCP call inside a span and reports it to the observer when it ends. */
async function observed(
  router: Router,
  context: RequestContext,
  namespace: NamespaceRoute,
  auth: Admitted,
  watcher: RequestObserver | undefined,
): Promise<HttpResponse> {
  const { tracer } = router;
  const at = Date.now();
  // Read before the call waits on anything: the record names the client even if it left.
  const { clientAddress, remoteAddress } = context.head;
  const span = tracer ? startRequestSpan(tracer, context.head.headers) : undefined;
  const spanContext = span?.spanContext();
  const traceId = spanContext && otelApi().isSpanContextValid(spanContext) ? spanContext.traceId : null;
  const started = performance.now();
  const note = emptyNote();
  // Refusals before the body is read know the call only from 2026-07-28 headers.
  note.method = context.head.headers['mcp-method']?.slice(0, 100) ?? null;
  watcher?.started();
  let status = 500;
  try {
    // The span is the active one while the call runs: the IPC link's child spans hang off it.
    const response = span
      ? await withActiveSpan(span, () => serveMcp(router, context, namespace, auth, note))
      : await serveMcp(router, context, namespace, auth, note);
    status = response.status;
    return response;
  } finally {
    const record = {
      at,
      namespace: namespace.name,
      method: note.method,
      tool: note.tool,
      knownTool: note.knownTool,
      outcome: note.outcome ?? outcomeOfStatus(status),
      errorCode: note.errorCode ?? errorCodeOfStatus(status),
      status,
      keyId: auth.apiKeyId,
      ownerId: auth.ownerId,
      clientAddress,
      peerAddress: remoteAddress,
      seconds: (performance.now() - started) / 1000,
      traceId,
    };
    watcher?.finished(record);
    if (span) endRequestSpan(span, record, context.head.headers['mcp-protocol-version']);
  }
}

/** Rate limit, header-level access check, body read and checks, then the MCP call itself. */
async function serveMcp(
  router: Router,
  context: RequestContext,
  route: NamespaceRoute,
  auth: Admitted,
  note: CallNote | undefined,
): Promise<HttpResponse> {
  const { head } = context;
  const { access, log } = router;

  // Every authenticated MCP request counts, before anything of it is read or run.
  if (router.rateGate) {
    // Most checks answer at once, from the local lease: awaited only when Redis is asked.
    const checked = router.rateGate.check(auth.apiKeyId, auth.limits, route.name);
    const limited = checked instanceof Promise ? await checked : checked;
    if (limited) {
      // deny's 503 while Redis is away refuses the key's request like a 429 does: the trail records it.
      if (note && limited.status === 503) note.errorCode = STORE_UNAVAILABLE;
      return limited;
    }
  }
  // Compiled by the namespace's first request (decision 0190); from then on a field read.
  const namespace = route.compiled ?? (await compiled(router, route));
  if (!namespace) return namespaceUnavailable(route);

  const caller = { apiKeyId: auth.apiKeyId, scopes: auth.scopes, limits: auth.limits };
  // A 2026-07-28 request names its call in headers: a key that may not make it is refused
  // here, before its body is read. Allowing it is provisional until the body agrees.
  let allowedFromHeaders: CallDescription | undefined;
  if (access.authorizeCall) {
    const route = routeFromHeaders(head.headers);
    if (route) {
      const call = { namespace: namespace.definition.name, ...route };
      const refusal = access.authorizeCall(caller, call);
      if (refusal) {
        log.debug({ apiKeyId: caller.apiKeyId, ...call }, 'call refused from headers');
        if (note) {
          note.outcome = 'denied';
          note.errorCode = 'forbidden';
          note.tool = route.toolName?.slice(0, 100) ?? null;
          note.knownTool = note.tool !== null && namespace.tools.has(note.tool);
        }
        return refusalResponse(refusal);
      }
      allowedFromHeaders = call;
    }
  }

  const body = await context.readBody();
  if (!body.ok) {
    if (body.reason === 'too-large') {
      return jsonError(413, 'payload_too_large', router.tooLargeMessage, { connection: 'close' });
    }
    return { status: 400 };
  }

  const decoded = bodyText(body.body);
  if ('refusal' in decoded) return decoded.refusal;

  requestCounter += 1;
  const requestId = `${requestIdPrefix}-${requestCounter.toString(36)}`;
  const post: McpPost = {
    namespace,
    text: decoded.text,
    headers: head.headers,
    caller,
    exchange: context,
    requestId,
    log,
    access,
  };
  // Set only when present (not spread in): the post is built on every request.
  if (allowedFromHeaders) post.allowedFromHeaders = allowedFromHeaders;
  if (note) post.note = note;
  return handleMcpPost(post);
}
