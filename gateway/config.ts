import { z } from 'zod';
import {
  BURST_FORM,
  LimitSyntaxError,
  parseBurst,
  parseRate,
  type RatePolicy,
  ratePolicy,
} from './core/key-limits.ts';
import { parseTrustProxy, type TrustedProxy } from './http/client-address.ts';
import { type AuditTarget, parseAuditTarget } from './ops/audit.ts';

const port = z.coerce.number().int().min(0).max(65_535);
const positiveInt = z.coerce.number().int().positive();
const list = z
  .string()
  .default('')
  .transform((raw) =>
    raw
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
  );

const flag = z.enum(['true', 'false']).transform((value) => value === 'true');

/**
 * The schema, built for the one parse at start and then dropped: kept at module level, its
 * zod objects (96 of them) would stay in every idle gateway's heap.
 */
function gatewayEnv() {
  return z.object({
    HOST: z.string().min(1).default('127.0.0.1'),
    PORT: port.default(8080),
    DATA_DIR: z.string().min(1).default('./data'),
    HTTP_ENGINE: z.enum(['auto', 'uws', 'node']).default('auto'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Browser origins allowed to call the MCP routes; requests without Origin (agents, CLIs) are unaffected. */
    MCP_ALLOWED_ORIGINS: list,
    MCP_MAX_BODY_BYTES: positiveInt.default(1024 * 1024),
    /** How long an admitted key is trusted without asking the store: the bound on revocation delay. */
    API_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
    API_KEY_NEGATIVE_CACHE_SIZE: positiveInt.default(10_000),
    /**
     * While the state store cannot be reached: how long past API_KEY_CACHE_TTL_MS a key the store
     * admitted is still admitted. 0 (off): such requests get 503 until the store answers.
     */
    API_KEY_STALE_ON_STORE_ERROR_MS: z.coerce.number().int().min(0).max(300_000).default(0),
    /** Listener threads sharing the port (uWS engine only): one App per thread, as uWS scales. */
    GATEWAY_THREADS: z.coerce.number().int().min(1).max(64).default(1),
    BROKER_CONSUMER_GROUP: z.string().optional(),
    /** Postgres for gateway state (memory, accounts, sessions and keys); unset keeps everything in SQLite under DATA_DIR. */
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\/\S+$/i, 'must be a postgres:// or postgresql:// URL')
      .optional(),
    /** The address users and agents reach the gateway at; https:// makes console cookies Secure. */
    PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
    CONSOLE_ENABLED: flag.default(true),
    /** Lets anyone who can reach /console create an account; off by default (admins add accounts). */
    CONSOLE_SELF_REGISTRATION: flag.default(false),
    CONSOLE_SESSION_TTL_MS: positiveInt.default(12 * 60 * 60 * 1000),
    /** Consecutive failed sign-ins that lock an account, and for how long. */
    SIGNIN_MAX_FAILURES: positiveInt.default(5),
    SIGNIN_LOCKOUT_MS: positiveInt.default(15 * 60 * 1000),
    /** Sign-in attempts one client address may make per minute. */
    SIGNIN_ATTEMPTS_PER_MINUTE: positiveInt.default(10),
    /** Single sign-on with an OpenID Connect provider: all three, or none. */
    OIDC_ISSUER: z.url().optional(),
    OIDC_CLIENT_ID: z.string().min(1).optional(),
    OIDC_CLIENT_SECRET: z.string().min(1).optional(),
    /** Button text for single sign-on. */
    OIDC_NAME: z.string().min(1).max(60).default('single sign-on'),
    /** The rate for keys without their own (`20/s`, `100/min`); unset: such keys are not limited. */
    RATE_LIMIT_DEFAULT: z.string().optional(),
    RATE_LIMIT_DEFAULT_BURST: z.string().optional(),
    /** Shares every key's rate limit across processes and hosts. */
    RATE_LIMIT_REDIS_URL: z
      .string()
      .regex(/^redis:\/\/\S+$/i, 'must be a redis:// URL, e.g. redis://127.0.0.1:6379')
      .optional(),
    /** allow: keep each process's own limit while Redis is away; deny: answer 503 until it returns. */
    RATE_LIMIT_ON_STORE_ERROR: z
      .enum(['allow', 'deny'], { message: 'must be allow or deny' })
      .default('allow'),
    /** The ops listener (GET /metrics, GET /readyz); unset: none. 0 picks a free port (its log line names it). */
    METRICS_PORT: z
      .string()
      .regex(/^\d{1,5}$/, 'must be a port number from 0 to 65535 (0 picks a free port), e.g. 9464')
      .transform(Number)
      .refine(
        (value) => value <= 65_535,
        'must be a port number from 0 to 65535 (0 picks a free port), e.g. 9464',
      )
      .optional(),
    /**
     * After SIGTERM, how long the gateway keeps answering 503 (shutting_down) before it closes
     * its connections, so a load balancer probing /readyz takes it out first. Unset: 3000 with
     * METRICS_PORT (something can probe /readyz), 0 without. At most the 10 s drain.
     */
    DRAIN_GRACE_MS: z.coerce.number().int().min(0).max(10_000).optional(),
    /** Loopback by default: metrics describe the fleet and should not face the internet. */
    METRICS_HOST: z.string().min(1).default('127.0.0.1'),
    /** stdout or file:PATH: one JSON line per tool call and refused request. */
    AUDIT_LOG: z.string().optional(),
    /** Reverse proxies whose X-Forwarded-For names the client; unset: the socket peer is the client. */
    TRUST_PROXY: z.string().optional(),
  });
}

export type GatewayConfig = z.output<ReturnType<typeof gatewayEnv>> & {
  /** RATE_LIMIT_DEFAULT and its burst, parsed: null when unset. */
  rateLimitDefault: RatePolicy | null;
  /** AUDIT_LOG, parsed: null when unset. */
  auditTarget: AuditTarget | null;
  /** TRUST_PROXY, parsed: null when unset. */
  trustProxy: TrustedProxy[] | null;
};

export class ConfigError extends Error {}

/** Parses the environment once; a bad value names its variable so the operator can fix it. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  // Parsed once: zod's compiled fast path would be built, and kept, for this one parse.
  const parsed = gatewayEnv().safeParse(cleaned, { jitless: true });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  let auditTarget: AuditTarget | null;
  let trustProxy: TrustedProxy[] | null;
  try {
    auditTarget = parseAuditTarget(parsed.data.AUDIT_LOG);
    trustProxy = parseTrustProxy(parsed.data.TRUST_PROXY);
  } catch (error) {
    throw new ConfigError(`invalid configuration: ${(error as Error).message}`);
  }
  const DRAIN_GRACE_MS = parsed.data.DRAIN_GRACE_MS ?? (parsed.data.METRICS_PORT === undefined ? 0 : 3_000);
  return {
    ...parsed.data,
    DRAIN_GRACE_MS,
    rateLimitDefault: defaultRatePolicy(parsed.data),
    auditTarget,
    trustProxy,
  };
}

function defaultRatePolicy(env: {
  RATE_LIMIT_DEFAULT?: string | undefined;
  RATE_LIMIT_DEFAULT_BURST?: string | undefined;
}): RatePolicy | null {
  try {
    const rate =
      env.RATE_LIMIT_DEFAULT === undefined ? null : parseRate(env.RATE_LIMIT_DEFAULT, 'RATE_LIMIT_DEFAULT');
    const burst =
      env.RATE_LIMIT_DEFAULT_BURST === undefined
        ? undefined
        : parseBurst(env.RATE_LIMIT_DEFAULT_BURST, 'RATE_LIMIT_DEFAULT_BURST');
    if (burst !== undefined && rate === null) {
      throw new LimitSyntaxError(
        `RATE_LIMIT_DEFAULT_BURST needs RATE_LIMIT_DEFAULT (a burst is ${BURST_FORM} on top of a rate)`,
      );
    }
    return rate ? ratePolicy(rate, burst) : null;
  } catch (error) {
    if (error instanceof LimitSyntaxError) throw new ConfigError(`invalid configuration: ${error.message}`);
    throw error;
  }
}
