import type * as GraphQL from 'graphql';
import type { DefinitionNode, FragmentDefinitionNode, SelectionSetNode } from 'graphql';
import { lazyRequire } from '../../../shared/lazy-require.ts';
import { UpstreamError } from '../../upstream/errors.ts';

const loadGraphql = lazyRequire<typeof GraphQL>('graphql');

const MAX_QUERY_CHARS = 8_000;
const MAX_QUERY_DEPTH = 8;

/**
 * The raw GraphQL tool is read-only: the document must parse, hold exactly one operation, and
 * that operation must be a query (no mutation or subscription, even if the token could write).
 * Size and nesting are capped because Product Hunt charges complexity against a small budget.
 * Returns the operation name, if any.
 */
export function checkReadOnlyQuery(source: string): { operationName: string | null; depth: number } {
  const { GraphQLError, Kind, parse } = loadGraphql();
  if (source.length > MAX_QUERY_CHARS) {
    throw new UpstreamError(
      'INVALID_ARGUMENT',
      `The query is ${source.length} characters; the limit is ${MAX_QUERY_CHARS}. Ask for fewer fields.`,
    );
  }
  let definitions: readonly DefinitionNode[];
  try {
    definitions = parse(source, { noLocation: true, maxTokens: 2_000 }).definitions;
  } catch (error) {
    const message = error instanceof GraphQLError ? error.message : String(error);
    throw new UpstreamError('INVALID_ARGUMENT', `The query does not parse: ${message}. Fix the syntax.`);
  }
  const operations = definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const others = definitions.filter(
    (d) => d.kind !== Kind.OPERATION_DEFINITION && d.kind !== Kind.FRAGMENT_DEFINITION,
  );
  if (others.length > 0 || operations.length !== 1) {
    throw new UpstreamError(
      'INVALID_ARGUMENT',
      `The document must hold exactly one operation (plus fragments); it holds ${operations.length} operation(s)${others.length ? ' and schema definitions' : ''}.`,
    );
  }
  const operation = operations[0];
  if (operation?.kind !== Kind.OPERATION_DEFINITION || operation.operation !== 'query') {
    const kind = operation?.kind === Kind.OPERATION_DEFINITION ? operation.operation : 'unknown';
    throw new UpstreamError(
      'INVALID_ARGUMENT',
      `Only queries are allowed here; this is a ${kind}. This namespace is read-only.`,
    );
  }
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const depth = selectionDepth(operation.selectionSet, fragments, new Set());
  if (depth > MAX_QUERY_DEPTH) {
    throw new UpstreamError(
      'INVALID_ARGUMENT',
      `The query nests ${depth} levels; the limit is ${MAX_QUERY_DEPTH}. Split it into several calls.`,
    );
  }
  return { operationName: operation.name?.value ?? null, depth };
}

function selectionDepth(
  set: SelectionSetNode | undefined,
  fragments: Map<string, FragmentDefinitionNode>,
  visiting: Set<string>,
): number {
  if (!set) return 0;
  const { Kind } = loadGraphql();
  let deepest = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      deepest = Math.max(
        deepest,
        selection.selectionSet ? 1 + selectionDepth(selection.selectionSet, fragments, visiting) : 1,
      );
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      deepest = Math.max(deepest, selectionDepth(selection.selectionSet, fragments, visiting));
    } else {
      const name = selection.name.value;
      const fragment = fragments.get(name);
      if (!fragment) {
        throw new UpstreamError('INVALID_ARGUMENT', `The query spreads an undefined fragment ${name}.`);
      }
      if (visiting.has(name)) {
        throw new UpstreamError('INVALID_ARGUMENT', `Fragment ${name} spreads itself.`);
      }
      visiting.add(name);
      deepest = Math.max(deepest, selectionDepth(fragment.selectionSet, fragments, visiting));
      visiting.delete(name);
    }
  }
  return deepest;
}
