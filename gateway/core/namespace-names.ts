/**
 * The namespaces the gateway mounts, each served at /{name}/mcp. Key scopes, quota names
 * and the keys CLI name them without loading any namespace's code; the registry mounts
 * exactly these (its type says so), and test/gateway/registry.test.ts ties them to the folders.
 */
export const NAMESPACE_NAMES = ['event', 'gsc', 'memory', 'producthunt', 'skills'] as const;

export type NamespaceName = (typeof NAMESPACE_NAMES)[number];

export function isNamespaceName(name: string): name is NamespaceName {
  return (NAMESPACE_NAMES as readonly string[]).includes(name);
}
