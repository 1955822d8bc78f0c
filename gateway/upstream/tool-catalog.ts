/**
 * Tool metadata said once per namespace: a catalog keyed by tool name, whose entries the tool
 * declarations spread, so a name, title, description or annotation is written in one place.
 */
import type { ToolAnnotations } from '../mcp/tool.ts';
import { ANNOTATIONS } from './namespace-kit.ts';

/** What a tools/list entry says about a tool besides its schemas. */
export interface ToolAbout {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
}

/** An entry: which ANNOTATIONS apply, then the title and the description. */
export type CatalogEntry = readonly [kind: keyof typeof ANNOTATIONS, title: string, description: string];

export function toolCatalog<Name extends string>(
  entries: Record<Name, CatalogEntry>,
): Record<Name, ToolAbout> {
  const catalog = {} as Record<Name, ToolAbout>;
  for (const name of Object.keys(entries) as Name[]) {
    const [kind, title, description] = entries[name];
    catalog[name] = { name, title, description, annotations: ANNOTATIONS[kind] };
  }
  return catalog;
}
