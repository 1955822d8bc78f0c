import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { openStateStore, stateStorePath } from './accounts/open.ts';
import { createApp } from './app.ts';
import { ApiKeyAuthenticator } from './auth/api-key-auth.ts';
import type { GatewayConfig } from './config.ts';
import { oidcSettings } from './console/oidc-settings.ts';
import { clientAddressRule } from './http/client-address.ts';
import { type Drainable, drainable } from './http/drain.ts';
import type { RequestHandler } from './http/engine.ts';
import { selectEngine } from './http/select-engine.ts';
import { meterTools } from './limits/quotas.ts';
import { type LimitObserver, RateGate } from './limits/rate-gate.ts';
import { processLimitTable } from './limits/shared-table.ts';
import type { AccessHooks } from './mcp/access.ts';
import { NamespaceRoute } from './mcp/namespace.ts';
import { mountedDefinition } from './mcp/namespace-mount.ts';
import { guardToolArguments, scopeAccess } from './mcp/scope-access.ts';
import type { BrokerCalls } from './namespaces/event/broker-calls.ts';
import {
  type AnyNamespace,
  mountNamespaces,
  namespaceBacklogs,
  namespaceHealthChecks,
} from './namespaces/registry.ts';
import { auditLine, isAudited } from './ops/audit.ts';
import type { GatewayMetrics } from './ops/metrics.ts';
import type { RequestObserver } from './ops/observer.ts';
import { type ReadinessCheck, type ReadinessReport, runReadiness } from './ops/readiness.ts';

export interface GatewayDependencies {
  config: GatewayConfig;
  log: Logger;
  broker: BrokerCalls;
  /** Where namespaces read their own settings; defaults to process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** A listener thread joining the port the main thread holds (see ListenOptions.sharedPort). */
  sharedPort?: boolean;
  /** Per-key access rules for MCP calls; without them every registered key may call everything. */
  access?: AccessHooks;
  /**
   * Hears every request refused by a rate limit, quota or poll cap, and every fall-back
   * while the shared rate-limit store is away: the hook a metrics layer counts with.
   */
  observeLimits?: LimitObserver;
  /** This thread's metrics; it also hears limit events unless observeLimits is given. */
  metrics?: GatewayMetrics;
  /** Where audit lines go (AUDIT_LOG); absent: no audit trail. */
  audit?: (line: string) => void;
  /** Traces MCP requests (OTEL_EXPORTER_OTLP_ENDPOINT); absent: no spans, no SDK. */
  tracer?: Tracer;
  /** The namespaces to mount; default the registry's (tests mount an example beside them). */
  namespaces?: readonly AnyNamespace[];
}

export interface RunningGateway {
  port: number;
  engine: string;
  build: string;
  namespaces: string[];
  /**
   * Answers every request in flight and 503 (`connection: close`) to any later one, then
   * stops accepting connections; resolves true when all were answered within `timeoutMs`.
   * With `graceMs`, the listener keeps answering 503 at least that long from the start.
   */
  drain(timeoutMs: number, graceMs?: number): Promise<boolean>;
  /** Checks the state store, the broker-worker link and Redis (when set); not ready while draining. */
  readiness(): Promise<ReadinessReport>;
  close(): Promise<void>;
}

/** Metrics and the audit trail both hear each request; either may be absent. */
function requestObserver(
  metrics: GatewayMetrics | undefined,
  audit: ((line: string) => void) | undefined,
): RequestObserver | undefined {
  if (!metrics && !audit) return undefined;
  return {
    started: () => metrics?.started(),
    finished(record) {
      metrics?.finished({
        namespace: record.namespace ?? 'none',
        method: record.method,
        tool: record.knownTool ? record.tool : null,
        outcome: record.outcome,
        seconds: record.seconds,
      });
      if (audit && isAudited(record)) audit(auditLine(record));
    },
    refused(record, reason) {
      metrics?.authFailed(reason);
      audit?.(auditLine(record));
    },
  };
}

/** The SQLite file holding accounts, sessions and keys (unless DATABASE_URL moves them to Postgres). */
export const keyStorePath = stateStorePath;

type StateStore = Awaited<ReturnType<typeof openStateStore>>;

/** The per-key rate gate over this process's limit table, sharing counts through Redis when RATE_LIMIT_REDIS_URL is set. */
async function createRateGate(
  config: GatewayConfig,
  log: Logger,
  table: ReturnType<typeof processLimitTable>,
  observeLimits: LimitObserver | undefined,
): Promise<RateGate> {
  return new RateGate({
    table,
    defaultPolicy: config.rateLimitDefault,
    // The Redis client loads only where it is used, still at start so a bad URL stops it there.
    ...(config.RATE_LIMIT_REDIS_URL
      ? { remote: new (await import('./limits/redis-store.ts')).RedisRateStore(config.RATE_LIMIT_REDIS_URL) }
      : {}),
    onStoreError: config.RATE_LIMIT_ON_STORE_ERROR,
    threads: config.GATEWAY_THREADS,
    log,
    ...(observeLimits ? { observe: observeLimits } : {}),
  });
}

/**
 * Each mounted namespace's route. Its first request builds its tools, wraps each in its quota
 * meter and argument guard, and compiles it (decision 0190): an idle gateway holds no tool.
 */
function routesOf(
  mounted: ReturnType<typeof mountNamespaces>,
  store: StateStore,
  table: ReturnType<typeof processLimitTable>,
  observeLimits: LimitObserver | undefined,
): NamespaceRoute[] {
  const meter = { store, table, ...(observeLimits ? { observe: observeLimits } : {}) };
  return mounted.map(
    (namespace) =>
      new NamespaceRoute(namespace.name, async () =>
        // Scopes are checked first, so a call the key may not make never spends its quota.
        guardToolArguments(meterTools(await mountedDefinition(namespace), meter)),
      ),
  );
}

/**
 * The /console pages when CONSOLE_ENABLED, with their own sign-in throttling. Their code
 * loads on the first /console request, which an API-only gateway never gets; the single
 * sign-on settings are read now, so a partial set still stops the start.
 */
function consolePagesFor(
  config: GatewayConfig,
  store: StateStore,
  log: Logger,
  names: string[],
): RequestHandler | undefined {
  if (!config.CONSOLE_ENABLED) return undefined;
  const oidc = oidcSettings(config);
  const load = async (): Promise<RequestHandler> => {
    const [{ createConsole }, { SignInService }] = await Promise.all([
      import('./console/routes.ts'),
      import('./accounts/sign-in.ts'),
    ]);
    return createConsole({
      store,
      signIn: new SignInService(store, {
        maxFailures: config.SIGNIN_MAX_FAILURES,
        lockoutMs: config.SIGNIN_LOCKOUT_MS,
        attemptsPerWindow: config.SIGNIN_ATTEMPTS_PER_MINUTE,
        windowMs: 60_000,
      }),
      namespaces: names,
      log,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      fallbackBaseUrl: `http://${config.HOST}:${config.PORT}`,
      sessionTtlMs: config.CONSOLE_SESSION_TTL_MS,
      selfRegistration: config.CONSOLE_SELF_REGISTRATION,
      oidc,
    });
  };
  // Concurrent first requests share one load; a failed one is tried again by the next request.
  let pages: Promise<RequestHandler> | undefined;
  return async (context) => {
    pages ??= load().catch((error: unknown) => {
      pages = undefined;
      throw error;
    });
    return (await pages)(context);
  };
}

/** What readiness probes: the state store, the broker-worker link, Redis when set, and each namespace's own checks. */
function readinessChecks(
  store: StateStore,
  broker: BrokerCalls,
  rateGate: RateGate,
  mounted: ReturnType<typeof mountNamespaces>,
): Record<string, ReadinessCheck> {
  const checks: Record<string, ReadinessCheck> = {
    // A real query: a closed handle, a lost Postgres or a vanished file all fail it.
    state_store: () => store.keyById('readiness-probe'),
    broker_worker: () => broker.call('status', {}, { timeoutMs: 1000 }),
  };
  const redisCheck = rateGate.storeCheck();
  if (redisCheck) checks.redis = redisCheck;
  Object.assign(checks, namespaceHealthChecks(mounted));
  return checks;
}

/**
 * Checks reported but not gating readiness. Under allow, a gateway without Redis still serves
 * (each process holds keys to its own limit), so Redis going away keeps it in its load balancer.
 */
function advisoryChecks(config: GatewayConfig): ReadonlySet<string> {
  return new Set(config.RATE_LIMIT_ON_STORE_ERROR === 'allow' ? ['redis'] : []);
}

/** The key check with the cache settings of the configuration. */
function keyAuthenticator(config: GatewayConfig, store: StateStore): ApiKeyAuthenticator {
  return new ApiKeyAuthenticator(store, {
    positiveTtlMs: config.API_KEY_CACHE_TTL_MS,
    negativeMaxEntries: config.API_KEY_NEGATIVE_CACHE_SIZE,
    staleOnStoreErrorMs: config.API_KEY_STALE_ON_STORE_ERROR_MS,
    storeName: config.DATABASE_URL ? 'postgres' : 'sqlite',
  });
}

/**
 * Answers the requests in flight (and 503 to later ones), then stops accepting. A load
 * balancer sends new calls here until its /readyz probes have failed; closing the listener
 * and its idle keep-alive connections before then races a call it is already sending on
 * one, which is cut with no answer. During `graceMs` such calls get a 503 with
 * `connection: close` instead, an answer the balancer retries on another gateway.
 */
async function drainListener(
  server: { stopAccepting(): void },
  requests: Drainable,
  timeoutMs: number,
  graceMs: number,
): Promise<boolean> {
  if (graceMs <= 0) {
    server.stopAccepting();
    return requests.drain(timeoutMs);
  }
  const [drained] = await Promise.all([
    requests.drain(timeoutMs),
    new Promise((resolve) => setTimeout(resolve, Math.min(graceMs, timeoutMs))),
  ]);
  server.stopAccepting();
  return drained;
}

export async function startGateway({
  config,
  log,
  broker,
  env = process.env,
  sharedPort = false,
  access,
  observeLimits: observeLimitsHook,
  metrics,
  audit,
  tracer,
  namespaces: contracts,
}: GatewayDependencies): Promise<RunningGateway> {
  const observeLimits = observeLimitsHook ?? metrics?.observeLimits;
  const store = await openStateStore(config);
  const limitTable = processLimitTable();
  const rateGate = await createRateGate(config, log, limitTable, observeLimits);
  const authenticator = keyAuthenticator(config, store);
  const mounted = mountNamespaces(
    {
      config,
      env,
      log,
      broker,
      ...(config.BROKER_CONSUMER_GROUP ? { defaultGroup: config.BROKER_CONSUMER_GROUP } : {}),
      ...(metrics ? { countRerank: metrics.countRerank } : {}),
    },
    contracts,
  );
  const namespaces = routesOf(mounted, store, limitTable, observeLimits);
  const names = namespaces.map((namespace) => namespace.name);
  const consolePages = consolePagesFor(config, store, log, names);
  const observer = requestObserver(metrics, audit);
  const handler = createApp({
    authenticator,
    namespaces,
    allowedOrigins: config.MCP_ALLOWED_ORIGINS,
    maxBodyBytes: config.MCP_MAX_BODY_BYTES,
    log,
    ...(consolePages ? { console: consolePages } : {}),
    // Key scopes unless the caller brings its own rules (tests of the hook seam do).
    access: access ?? scopeAccess(namespaces),
    rateGate,
    ...(observer ? { observer } : {}),
    ...(tracer ? { tracer } : {}),
  });

  const { engine, fallbackReasons } = await selectEngine(config.HTTP_ENGINE);
  const requests = drainable(handler);
  const listening = { host: config.HOST, port: config.PORT, maxBodyBytes: config.MCP_MAX_BODY_BYTES };
  const clientAddressOf = clientAddressRule(config.trustProxy);
  const server = await engine.listen({ ...listening, sharedPort, clientAddressOf }, requests.handler);
  let draining = false;
  const checks = readinessChecks(store, broker, rateGate, mounted);
  const advisory = advisoryChecks(config);
  const readiness = () => runReadiness(checks, draining, { advisory });
  metrics?.watchProcess({
    readiness,
    backlogs: () => namespaceBacklogs(mounted),
  });
  log.info(
    {
      engine: engine.name,
      build: engine.build,
      ...(fallbackReasons.length > 0 ? { uwsUnavailable: fallbackReasons } : {}),
      host: config.HOST,
      port: server.port,
      namespaces: names,
    },
    `gateway listening on http://${config.HOST}:${server.port} with ${engine.build}`,
  );
  return {
    port: server.port,
    engine: engine.name,
    build: engine.build,
    namespaces: names,
    readiness,
    drain(timeoutMs, graceMs = 0) {
      draining = true;
      return drainListener(server, requests, timeoutMs, graceMs);
    },
    async close() {
      await server.close();
      // Namespaces release what they hold (database handles, worker pools) after the
      // listener stops, so no call is cut mid-way by its own store closing.
      await Promise.allSettled(mounted.map((namespace) => namespace.close()));
      await rateGate.close();
      await store.close();
    },
  };
}
