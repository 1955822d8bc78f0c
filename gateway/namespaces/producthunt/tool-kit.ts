/**
 * The two shapes most producthunt tools share, each written once: a page of a connection
 * (`count`, the items, paging, meta) and one thing looked up by id or slug (NOT_FOUND when absent).
 */
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import type { ToolAbout } from '../../upstream/tool-catalog.ts';
import type { ProductHuntClient } from './client.ts';
import { clampFirst, meta, metaShape, nodes, notFound, page, pageShape, requireOne } from './shape.ts';

export interface ProductHuntToolDeps {
  client: ProductHuntClient;
  /** Throws NOT_CONFIGURED when credentials are missing. */
  ready(): void;
  now: () => number;
}

type Raw = Record<string, unknown>;
type Connection = Parameters<typeof nodes>[0];

/**
 * Page size and cursor arguments. The posts and comments tools were published with the longer
 * wording, the others with the shorter; both stay as agents already read them.
 */
export function pageInput(fallback: number, wording: 'long' | 'short') {
  const long = wording === 'long';
  return {
    first: pageSize(fallback, long ? '; values above 20 are cut to 20' : ''),
    after: z
      .string()
      .optional()
      .describe(`Cursor from a previous end_cursor${long ? ', to get the next page' : ''}.`),
  };
}

/** The paging variables a tool sends: `first` clamped as the origin did, and the cursor. */
export function paged(args: { first?: number; after?: string }, fallback: number) {
  return { first: clampFirst(args.first, fallback), after: args.after };
}

export function pageSize(fallback: number, note = '') {
  return z.number().int().optional().describe(`Page size (default ${fallback}, at most 20${note}).`);
}

export const idOrSlug = { id: z.string().optional(), slug: z.string().optional() };
export const idOrUsername = { id: z.string().optional(), username: z.string().optional() };

interface ConnectionSpec<In extends z.ZodObject> {
  /** The arguments besides paging, which every list takes last: `first` and `after`. */
  input: In;
  /** Default page size, and which wording its arguments were published with. */
  paging: [fallback: number, wording: 'long' | 'short'];
  /** The query's root field and the result's list field. */
  field: string;
  item: z.ZodType;
  document: string;
  /** The query's variables besides paging; `echo` is what the result repeats ahead of its list. */
  request(args: z.output<In>): { variables: Raw; echo?: Raw };
  echoShape?: z.ZodRawShape;
  map?(node: Raw): Raw;
}

/** A tool answering one page of a connection: `{ ...echo, count, <field>, paging, meta }`. */
export function connectionTool<In extends z.ZodObject>(
  deps: ProductHuntToolDeps,
  about: ToolAbout,
  spec: ConnectionSpec<In>,
): ToolDefinition {
  const [fallback, wording] = spec.paging;
  return defineTool({
    ...about,
    input: spec.input.extend(pageInput(fallback, wording)),
    output: z.object({ [spec.field]: z.array(spec.item), ...pageShape, ...metaShape, ...spec.echoShape }),
    async handler(args, { signal }) {
      deps.ready();
      const { variables, echo } = spec.request(args as z.output<In>);
      const result = await deps.client.query<Record<string, Connection>>(
        spec.document,
        { ...paged(args as { first?: number; after?: string }, fallback), ...variables },
        signal,
      );
      const connection = result.data[spec.field];
      const items = nodes(connection).map((node) => (spec.map ? spec.map(node) : node));
      return {
        ...echo,
        count: items.length,
        [spec.field]: items,
        ...page(connection),
        ...meta(result),
      } as never;
    },
  });
}

/**
 * GraphQL variables from snake_case arguments: each named argument under its camelCase name,
 * absent ones left undefined (so they are not sent).
 */
export function camelVariables(args: Raw, names: string[]): Raw {
  return Object.fromEntries(
    names.map((name) => [name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()), args[name]]),
  );
}

interface LookupSpec<In extends z.ZodObject> {
  input: In;
  /** For one that carries a page of something: its default size and wording, as for lists. */
  paging?: [fallback: number, wording: 'long' | 'short'];
  output: z.ZodType;
  document: string | ((args: z.output<In>) => string);
  /** The query's root field, also what NOT_FOUND calls it. */
  field: string;
  /** The two arguments of which one names it; absent: the input's required `id`. */
  by?: [string, string];
  /** The query's variables besides what names it and paging. */
  variables?(args: z.output<In>): Raw;
  /** The result before its meta, from what was found. */
  shape(found: Raw, args: z.output<In>): Raw;
}

/** A tool answering one thing found by id (or slug, or username), with NOT_FOUND when there is none. */
export function lookupTool<In extends z.ZodObject>(
  deps: ProductHuntToolDeps,
  about: ToolAbout,
  spec: LookupSpec<In>,
): ToolDefinition {
  const paging = spec.paging;
  return defineTool({
    ...about,
    input: paging ? spec.input.extend(pageInput(...paging)) : spec.input,
    output: spec.output,
    async handler(raw, { signal }) {
      deps.ready();
      const args = raw as z.output<In>;
      const ids = spec.by ? requireOne(args, spec.by, spec.field) : { id: String((args as Raw).id) };
      const document = typeof spec.document === 'string' ? spec.document : spec.document(args);
      const variables = { ...ids, ...(paging ? paged(args, paging[0]) : {}), ...spec.variables?.(args) };
      const result = await deps.client.query<Record<string, Raw | null>>(document, variables, signal);
      const found = result.data[spec.field];
      if (!found) throw notFound(spec.field, ids);
      return { ...spec.shape(found, args), ...meta(result) } as never;
    },
  });
}
