import { isMainThread } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config.ts';
import type { Env, NamespaceContract } from '../mcp/namespace-contract.ts';
import { type MountedNamespace, mountNamespace } from '../mcp/namespace-mount.ts';
import type { BrokerCalls } from './event/broker-calls.ts';
import { eventNamespace } from './event/index.ts';
import { gscNamespace } from './gsc/index.ts';
import { memoryNamespace } from './memory/index.ts';
import { productHuntNamespace } from './producthunt/index.ts';
import { skillsNamespace } from './skills/index.ts';

/**
 * What every namespace's create() is handed; each declares the part it uses. Settings are
 * not here: the contract parses each namespace's own from `env` with its own schema.
 */
export interface NamespaceDependencies {
  config: GatewayConfig;
  log: Logger;
  broker: BrokerCalls;
  defaultGroup?: string;
  /** This thread's count of memory rerank outcomes (mcp_memory_rerank_total); absent without metrics. */
  countRerank?: (outcome: string) => void;
}

// biome-ignore lint/suspicious/noExplicitAny: each namespace's schema differs; the contract types each create() against its own.
export type AnyNamespace = NamespaceContract<any, NamespaceDependencies>;

/**
 * One line per mounted namespace, in the order they are mounted. A folder under
 * gateway/namespaces/ that is not listed here fails test/gateway/registry.test.ts, so nothing
 * is written and forgotten; so does a name missing from core/namespace-names.ts.
 */
export const NAMESPACES: readonly AnyNamespace[] = [
  eventNamespace,
  gscNamespace,
  memoryNamespace,
  productHuntNamespace,
  skillsNamespace,
];

/**
 * Mounts each namespace through the contract. A namespace whose settings are bad is mounted
 * all the same (its tools answer SETTINGS_INVALID naming the setting), and said once, here,
 * by the main thread (listener threads mount the same namespaces and stay quiet).
 */
export function mountNamespaces(
  deps: NamespaceDependencies & { env: Env },
  namespaces: readonly AnyNamespace[] = NAMESPACES,
): MountedNamespace[] {
  const { env, ...shared } = deps;
  return namespaces.map((namespace) => {
    const mounted = mountNamespace(namespace, env, shared);
    if (mounted.settingsProblems.length > 0 && isMainThread)
      deps.log.error(
        { namespace: mounted.name, settings: mounted.settingsProblems },
        `namespace ${mounted.name} has bad settings (${mounted.settingsProblems.join('; ')}): it is mounted, and its tools refuse calls with SETTINGS_INVALID until they are fixed and the gateway restarted`,
      );
    return mounted;
  });
}

/** A GET /readyz check per namespace that has health(): it fails with the namespace's own words. */
export function namespaceHealthChecks(
  mounted: readonly MountedNamespace[],
): Record<string, () => Promise<void>> {
  const checks: Record<string, () => Promise<void>> = {};
  for (const namespace of mounted) {
    const { health } = namespace;
    if (!health) continue;
    checks[`namespace_${namespace.name}`] = async () => {
      const report = await health();
      if (!report.ok) throw new Error(report.detail ?? `${namespace.name} is not healthy`);
    };
  }
  return checks;
}

/**
 * Each namespace's backlog (see NamespaceParts.backlog). One that fails, or does not answer
 * within `timeoutMs` (a lost Postgres), counts as unknown: a scrape is never held by it.
 */
export async function namespaceBacklogs(
  mounted: readonly MountedNamespace[],
  timeoutMs = 1500,
): Promise<Record<string, number | null>> {
  const withBacklog = mounted.filter((namespace) => namespace.backlog);
  const counts = await Promise.allSettled(
    withBacklog.map((namespace) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), timeoutMs);
      });
      return Promise.race([namespace.backlog!(), late]).finally(() => clearTimeout(timer));
    }),
  );
  return Object.fromEntries(
    withBacklog.map((namespace, i) => {
      const count = counts[i]!;
      return [namespace.name, count.status === 'fulfilled' ? count.value : null];
    }),
  );
}
