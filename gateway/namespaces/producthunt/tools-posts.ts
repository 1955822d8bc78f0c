import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { ANNOTATIONS } from '../../upstream/namespace-kit.ts';
import { addDays, isValidDate, pacificDate, pacificMidnight } from '../../upstream/pacific.ts';
import type { ProductHuntClient } from './client.ts';
import { checkReadOnlyQuery } from './graphql-guard.ts';
import { GET_COMMENT, GET_POST, LIST_POSTS, POST_COMMENTS } from './queries.ts';
import {
  clampFirst,
  commentSchema,
  mapComment,
  mapPost,
  meta,
  metaShape,
  nodes,
  notFound,
  page,
  pageShape,
  postSchema,
  REDACTION_NOTE,
  requireOne,
  upperEnum,
  userSchema,
} from './shape.ts';

export interface ProductHuntToolDeps {
  client: ProductHuntClient;
  /** Throws NOT_CONFIGURED when credentials are missing. */
  ready(): void;
  now: () => number;
}

const first = (fallback: number) =>
  z
    .number()
    .int()
    .optional()
    .describe(`Page size (default ${fallback}, at most 20; values above 20 are cut to 20).`);
const after = z.string().optional().describe('Cursor from a previous end_cursor, to get the next page.');
const isoDate = z.string().optional().describe('ISO-8601 date or date-time.');

/** `VOTES` was the origin's (wrong) value; Product Hunt's enum says VOTES_COUNT. */
const commentOrder = upperEnum(['NEWEST', 'VOTES_COUNT', 'VOTES'])
  .optional()
  .transform((order) => (order === undefined || order === 'VOTES' ? 'VOTES_COUNT' : order))
  .describe('VOTES_COUNT (default; VOTES is accepted as an alias) or NEWEST.');

const postList = z.object({ posts: z.array(postSchema), ...pageShape, ...metaShape });

export function postTools(deps: ProductHuntToolDeps): ToolDefinition[] {
  return [
    listPostsTool(deps),
    leaderboardTool(deps),
    getPostTool(deps),
    getPostCommentsTool(deps),
    getCommentTool(deps),
    graphqlTool(deps),
  ];
}

function listPostsTool({ client, ready }: ProductHuntToolDeps): ToolDefinition {
  return defineTool({
    name: 'producthunt_list_posts',
    title: 'List Product Hunt launches',
    description:
      'Lists posts (launches) with optional filters: order RANKING (default) | NEWEST | VOTES | FEATURED_AT, featured, topic slug, posted_after/posted_before (ISO-8601), twitter_url. Paged with first/after; returns end_cursor and has_next_page.',
    input: z.object({
      order: upperEnum(['RANKING', 'NEWEST', 'VOTES', 'FEATURED_AT']).optional(),
      featured: z.boolean().optional(),
      topic: z.string().optional().describe('Topic slug, e.g. "artificial-intelligence".'),
      posted_after: isoDate,
      posted_before: isoDate,
      twitter_url: z.string().optional().describe('Only posts with this Twitter/X URL.'),
      first: first(10),
      after,
    }),
    output: postList,
    annotations: ANNOTATIONS.read,
    async handler(args, { signal }) {
      ready();
      const result = await client.query<{ posts: Parameters<typeof nodes>[0] }>(
        LIST_POSTS,
        {
          first: clampFirst(args.first, 10),
          after: args.after,
          order: args.order ?? 'RANKING',
          featured: args.featured,
          topic: args.topic,
          postedAfter: args.posted_after,
          postedBefore: args.posted_before,
          twitterUrl: args.twitter_url,
        },
        signal,
      );
      const posts = nodes(result.data.posts).map(mapPost);
      return { count: posts.length, posts, ...page(result.data.posts), ...meta(result) } as never;
    },
  });
}

function leaderboardTool({ client, ready, now }: ProductHuntToolDeps): ToolDefinition {
  return defineTool({
    name: 'producthunt_leaderboard',
    title: 'Product Hunt daily leaderboard',
    description:
      "The featured launches of one Product Hunt day, ranked as on the site. A day runs midnight to midnight Pacific time (Product Hunt's clock); date defaults to today in Pacific time.",
    input: z.object({
      date: z
        .string()
        .optional()
        .describe('YYYY-MM-DD, a Pacific-time day (default: today in Pacific time).'),
      first: first(10),
      after,
    }),
    output: postList.extend({ date: z.string(), window: z.object({ start: z.string(), end: z.string() }) }),
    annotations: ANNOTATIONS.read,
    async handler(args, { signal }) {
      ready();
      const date = args.date ?? pacificDate(now());
      if (!isValidDate(date)) {
        throw new UpstreamError('INVALID_ARGUMENT', `date must be YYYY-MM-DD; got ${JSON.stringify(date)}.`);
      }
      const start = pacificMidnight(date).toISOString();
      const end = pacificMidnight(addDays(date, 1)).toISOString();
      const result = await client.query<{ posts: Parameters<typeof nodes>[0] }>(
        LIST_POSTS,
        {
          first: clampFirst(args.first, 10),
          after: args.after,
          order: 'RANKING',
          featured: true,
          postedAfter: start,
          postedBefore: end,
        },
        signal,
      );
      const posts = nodes(result.data.posts).map(mapPost);
      return {
        date,
        window: { start, end },
        count: posts.length,
        posts,
        ...page(result.data.posts),
        ...meta(result),
      } as never;
    },
  });
}

function getPostTool({ client, ready }: ProductHuntToolDeps): ToolDefinition {
  return defineTool({
    name: 'producthunt_get_post',
    title: 'Get one Product Hunt post',
    description: `One post in full (description, website, media, topics, makers, hunter) by id or slug. ${REDACTION_NOTE}`,
    input: z.object({ id: z.string().optional(), slug: z.string().optional() }),
    output: postSchema.extend({
      ...metaShape,
      makers: z.array(userSchema.nullable()),
      user: userSchema.nullable(),
    }),
    annotations: ANNOTATIONS.read,
    async handler(args, { signal }) {
      ready();
      const ids = requireOne(args, ['id', 'slug'], 'post');
      const result = await client.query<{ post: Record<string, unknown> | null }>(GET_POST, ids, signal);
      if (!result.data.post) throw notFound('post', ids);
      return { ...mapPost(result.data.post), ...meta(result) } as never;
    },
  });
}

function getPostCommentsTool({ client, ready }: ProductHuntToolDeps): ToolDefinition {
  return defineTool({
    name: 'producthunt_get_post_comments',
    title: 'Comments on a Product Hunt post',
    description: `Comments on a post (by id or slug), ordered by VOTES_COUNT (default) or NEWEST, paged with first/after. ${REDACTION_NOTE}`,
    input: z.object({
      id: z.string().optional(),
      slug: z.string().optional(),
      order: commentOrder,
      first: first(20),
      after,
    }),
    output: z.object({
      post_id: z.string(),
      post_name: z.string(),
      comments: z.array(commentSchema),
      ...pageShape,
      ...metaShape,
    }),
    annotations: ANNOTATIONS.read,
    async handler(args, { signal }) {
      ready();
      const ids = requireOne(args, ['id', 'slug'], 'post');
      const result = await client.query<{ post: (Record<string, unknown> & { comments?: never }) | null }>(
        POST_COMMENTS,
        { ...ids, first: clampFirst(args.first, 20), after: args.after, order: args.order },
        signal,
      );
      const post = result.data.post;
      if (!post) throw notFound('post', ids);
      const comments = nodes(post.comments).map(mapComment);
      return {
        post_id: post.id,
        post_name: post.name,
        count: comments.length,
        comments,
        ...page(post.comments),
        ...meta(result),
      } as never;
    },
  });
}

function getCommentTool({ client, ready }: ProductHuntToolDeps): ToolDefinition {
  return defineTool({
    name: 'producthunt_get_comment',
    title: 'Get one Product Hunt comment with replies',
    description: `One comment by id, with its replies (ordered VOTES_COUNT or NEWEST, paged). ${REDACTION_NOTE}`,
    input: z.object({ id: z.string().min(1), order: commentOrder, first: first(10), after }),
    output: commentSchema.extend({
      replies: z.array(commentSchema),
      replies_page: z.object(pageShape),
      ...metaShape,
    }),
    annotations: ANNOTATIONS.read,
    async handler(args, { signal }) {
      ready();
      const result = await client.query<{
        comment: (Record<string, unknown> & { replies?: never }) | null;
      }>(
        GET_COMMENT,
        { id: args.id, first: clampFirst(args.first, 10), after: args.after, order: args.order },
        signal,
      );
      const comment = result.data.comment;
      if (!comment) throw notFound('comment', { id: args.id });
      const replies = nodes(comment.replies).map(mapComment);
      return {
        ...mapComment(comment),
        replies,
        replies_page: { count: replies.length, ...page(comment.replies) },
        ...meta(result),
      } as never;
    },
  });
}

function graphqlTool({ client, ready }: ProductHuntToolDeps): ToolDefinition {
  return defineTool({
    name: 'producthunt_graphql',
    title: 'Run a read-only Product Hunt GraphQL query',
    description:
      'Escape hatch: runs one GraphQL query (no mutation or subscription; at most 8,000 characters and 8 levels deep) against the Product Hunt API v2 with optional variables. Prefer the specific tools; every field costs rate budget.',
    input: z.object({
      query: z.string().min(1),
      variables: z.record(z.string(), z.unknown()).optional(),
    }),
    output: z.object({ data: z.unknown(), ...metaShape }),
    annotations: ANNOTATIONS.read,
    async handler(args, { signal }) {
      ready();
      checkReadOnlyQuery(args.query);
      const result = await client.query<unknown>(args.query, args.variables ?? {}, signal);
      return { data: result.data, ...meta(result) };
    },
  });
}
