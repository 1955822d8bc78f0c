/** Turns Product Hunt's GraphQL shapes into tool results, and the zod schemas for them. */
import { z } from 'zod';
import { UpstreamError } from '../../upstream/errors.ts';
import { untrustedNotice } from '../../upstream/namespace-kit.ts';
import type { GraphQLErrorItem, GraphQLResult, RateLimit } from './client.ts';

export const UNTRUSTED = untrustedNotice(
  'Product Hunt (names, taglines, descriptions, comment bodies, headlines)',
);

export const REDACTION_NOTE =
  'Since 2023 Product Hunt hides other users\' data ("[REDACTED]", id "0"). Such users come back with null fields and redacted: true; their absence of data is not a fact about them.';

type Raw = Record<string, unknown>;
type Connection = {
  totalCount?: number;
  pageInfo?: { endCursor?: string | null; hasNextPage?: boolean };
  edges?: Array<{ node: Raw }>;
};

const REDACTED = '[REDACTED]';

/** A user Product Hunt redacted is flagged, never presented as a real profile. */
export function mapUser(user: Raw | null | undefined): Raw | null {
  if (!user) return null;
  const redacted = user.id === '0' || Object.values(user).some((value) => value === REDACTED);
  if (!redacted) return { ...user, redacted: false };
  const out: Raw = { redacted: true };
  for (const [key, value] of Object.entries(user)) {
    if (typeof value !== 'object' || value === null) out[key] = null;
  }
  out.redacted = true;
  return out;
}

export function nodes(connection: Connection | null | undefined): Raw[] {
  return (connection?.edges ?? []).map((edge) => edge.node);
}

export function mapPost(post: Raw): Raw {
  const { topics, thumbnail, makers, user, ...rest } = post as Raw & {
    topics?: Connection;
    thumbnail?: { url?: string } | null;
    makers?: Raw[];
    user?: Raw;
  };
  return {
    ...rest,
    thumbnail_url: thumbnail?.url ?? null,
    topics: nodes(topics),
    ...(makers ? { makers: makers.map((maker) => mapUser(maker)) } : {}),
    ...(user ? { user: mapUser(user) } : {}),
  };
}

export function mapComment(comment: Raw): Raw {
  const { user, replies, ...rest } = comment as Raw & { user?: Raw; replies?: unknown };
  return { ...rest, user: mapUser(user) };
}

export function page(connection: Connection | null | undefined) {
  return {
    end_cursor: connection?.pageInfo?.endCursor ?? null,
    has_next_page: connection?.pageInfo?.hasNextPage ?? false,
    total_count: connection?.totalCount ?? null,
  };
}

/** What every result carries besides its data. */
export function meta(result: GraphQLResult<unknown>) {
  return {
    rate_limit: result.rateLimit,
    untrusted_content: UNTRUSTED,
    ...(result.errors.length ? { graphql_errors: result.errors } : {}),
  };
}

export function requireOne(
  args: Record<string, unknown>,
  keys: [string, string],
  what: string,
): Record<string, string> {
  const chosen: Record<string, string> = {};
  for (const key of keys) {
    const value = args[key];
    if (typeof value === 'string' && value.trim()) chosen[key] = value.trim();
  }
  if (Object.keys(chosen).length === 0) {
    throw new UpstreamError('INVALID_ARGUMENT', `Give ${keys.join(' or ')} to say which ${what}.`);
  }
  return chosen;
}

export function notFound(what: string, ids: Record<string, unknown>): UpstreamError {
  const which = Object.entries(ids)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k} ${JSON.stringify(v)}`)
    .join(', ');
  return new UpstreamError('NOT_FOUND', `No ${what} found with ${which}. Check the id or slug.`);
}

/** Page size: the origin's rule (≤0 or absent → default, above max → max). */
export function clampFirst(value: number | undefined, fallback: number, max = 20): number {
  if (value === undefined || value <= 0) return fallback;
  return Math.min(value, max);
}

/** Enum input compared case-insensitively, so `newest` works like `NEWEST`. */
export function upperEnum<T extends readonly [string, ...string[]]>(values: T) {
  return z.preprocess((v) => (typeof v === 'string' ? v.trim().toUpperCase() : v), z.enum(values));
}

const rateLimitSchema = z
  .object({
    limit: z.number().nullable(),
    remaining: z.number().nullable(),
    reset_in_s: z.number().nullable(),
  })
  .nullable();
const errorsSchema = z.array(
  z.object({ message: z.string(), path: z.array(z.union([z.string(), z.number()])).optional() }),
);

export const metaShape = {
  rate_limit: rateLimitSchema,
  untrusted_content: z.string(),
  graphql_errors: errorsSchema.optional(),
};

export const userSchema = z.looseObject({
  id: z.string().nullable(),
  name: z.string().nullable(),
  username: z.string().nullable(),
  url: z.string().nullable(),
  redacted: z.boolean(),
});

export const postSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  tagline: z.string(),
  slug: z.string(),
  url: z.string(),
  votesCount: z.number(),
  commentsCount: z.number(),
  thumbnail_url: z.string().nullable(),
  topics: z.array(z.looseObject({ name: z.string(), slug: z.string() })),
});

export const commentSchema = z.looseObject({
  id: z.string(),
  body: z.string(),
  createdAt: z.string(),
  votesCount: z.number(),
  user: userSchema.nullable(),
});

export const topicSchema = z.looseObject({ id: z.string(), name: z.string(), slug: z.string() });
export const collectionSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  user: userSchema.nullable().optional(),
});

export const pageShape = {
  count: z.number(),
  end_cursor: z.string().nullable(),
  has_next_page: z.boolean(),
  total_count: z.number().nullable(),
};

export type { GraphQLErrorItem, RateLimit };
