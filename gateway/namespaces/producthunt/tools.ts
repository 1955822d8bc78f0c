/** The producthunt tools, in the order tools/list shows them (see productHuntTools). */
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { addDays, isValidDate, pacificDate, pacificMidnight } from '../../upstream/pacific.ts';
import { TOOLS } from './catalog.ts';
import { checkReadOnlyQuery } from './graphql-guard.ts';
import {
  GET_COLLECTION,
  GET_COMMENT,
  GET_POST,
  GET_TOPIC,
  GET_USER,
  LIST_COLLECTIONS,
  LIST_POSTS,
  LIST_TOPICS,
  POST_COMMENTS,
  USER_POSTS,
  VIEWER,
} from './queries.ts';
import {
  clampFirst,
  collectionSchema,
  commentSchema,
  mapComment,
  mapPost,
  mapUser,
  meta,
  metaShape,
  nodes,
  page,
  pageShape,
  postSchema,
  topicSchema,
  upperEnum,
  userSchema,
} from './shape.ts';
import {
  camelVariables,
  connectionTool,
  idOrSlug,
  idOrUsername,
  lookupTool,
  type ProductHuntToolDeps,
  pageSize,
} from './tool-kit.ts';

type Connection = Parameters<typeof nodes>[0];
type Obj = Record<string, unknown>;

export function productHuntTools(deps: ProductHuntToolDeps): ToolDefinition[] {
  return [
    listPostsTool,
    leaderboardTool,
    getPostTool,
    getPostCommentsTool,
    getCommentTool,
    graphqlTool,
    listTopicsTool,
    getTopicTool,
    listCollectionsTool,
    getCollectionTool,
    getUserTool,
    listUserPostsTool,
    viewerTool,
  ].map((make) => make(deps));
}

const isoDate = z.string().optional().describe('ISO-8601 date or date-time.');

/** `VOTES` was the origin's (wrong) value; Product Hunt's enum says VOTES_COUNT. */
const commentOrder = upperEnum(['NEWEST', 'VOTES_COUNT', 'VOTES'])
  .optional()
  .transform((order) => (order === undefined || order === 'VOTES' ? 'VOTES_COUNT' : order))
  .describe('VOTES_COUNT (default; VOTES is accepted as an alias) or NEWEST.');

function listPostsTool(deps: ProductHuntToolDeps): ToolDefinition {
  return connectionTool(deps, TOOLS.producthunt_list_posts, {
    input: z.object({
      order: upperEnum(['RANKING', 'NEWEST', 'VOTES', 'FEATURED_AT']).optional(),
      featured: z.boolean().optional(),
      topic: z.string().optional().describe('Topic slug, e.g. "artificial-intelligence".'),
      posted_after: isoDate,
      posted_before: isoDate,
      twitter_url: z.string().optional().describe('Only posts with this Twitter/X URL.'),
    }),
    paging: [10, 'long'],
    field: 'posts',
    item: postSchema,
    document: LIST_POSTS,
    map: mapPost,
    request: (args) => ({
      variables: {
        order: args.order ?? 'RANKING',
        ...camelVariables(args, ['featured', 'topic', 'posted_after', 'posted_before', 'twitter_url']),
      },
    }),
  });
}

function leaderboardTool(deps: ProductHuntToolDeps): ToolDefinition {
  return connectionTool(deps, TOOLS.producthunt_leaderboard, {
    input: z.object({
      date: z
        .string()
        .optional()
        .describe('YYYY-MM-DD, a Pacific-time day (default: today in Pacific time).'),
    }),
    paging: [10, 'long'],
    field: 'posts',
    item: postSchema,
    echoShape: { date: z.string(), window: z.object({ start: z.string(), end: z.string() }) },
    document: LIST_POSTS,
    map: mapPost,
    request(args) {
      const date = args.date ?? pacificDate(deps.now());
      if (!isValidDate(date)) {
        throw new UpstreamError('INVALID_ARGUMENT', `date must be YYYY-MM-DD; got ${JSON.stringify(date)}.`);
      }
      const start = pacificMidnight(date).toISOString();
      const end = pacificMidnight(addDays(date, 1)).toISOString();
      return {
        variables: {
          order: 'RANKING',
          featured: true,
          postedAfter: start,
          postedBefore: end,
        },
        echo: { date, window: { start, end } },
      };
    },
  });
}

function getPostTool(deps: ProductHuntToolDeps): ToolDefinition {
  return lookupTool(deps, TOOLS.producthunt_get_post, {
    input: z.object(idOrSlug),
    output: postSchema.extend({
      ...metaShape,
      makers: z.array(userSchema.nullable()),
      user: userSchema.nullable(),
    }),
    document: GET_POST,
    field: 'post',
    by: ['id', 'slug'],
    shape: mapPost,
  });
}

/** A page of comments as results carry it: mapped, counted, with its paging. */
function commentPage(connection: unknown) {
  const comments = nodes(connection as Connection).map(mapComment);
  return { comments, count: comments.length, paging: page(connection as Connection) };
}

function getPostCommentsTool(deps: ProductHuntToolDeps): ToolDefinition {
  return lookupTool(deps, TOOLS.producthunt_get_post_comments, {
    input: z.object({ ...idOrSlug, order: commentOrder }),
    paging: [20, 'long'],
    output: z.object({
      post_id: z.string(),
      post_name: z.string(),
      comments: z.array(commentSchema),
      ...pageShape,
      ...metaShape,
    }),
    document: POST_COMMENTS,
    field: 'post',
    by: ['id', 'slug'],
    variables: (args) => ({ order: args.order }),
    shape(post) {
      const { comments, count, paging } = commentPage(post.comments);
      return { post_id: post.id, post_name: post.name, count, comments, ...paging };
    },
  });
}

function getCommentTool(deps: ProductHuntToolDeps): ToolDefinition {
  return lookupTool(deps, TOOLS.producthunt_get_comment, {
    input: z.object({ id: z.string().min(1), order: commentOrder }),
    paging: [10, 'long'],
    output: commentSchema.extend({
      replies: z.array(commentSchema),
      replies_page: z.object(pageShape),
      ...metaShape,
    }),
    document: GET_COMMENT,
    field: 'comment',
    variables: (args) => ({ order: args.order }),
    shape(comment) {
      const { comments: replies, count, paging } = commentPage(comment.replies);
      return { ...mapComment(comment), replies, replies_page: { count, ...paging } };
    },
  });
}

function graphqlTool({ client, ready }: ProductHuntToolDeps): ToolDefinition {
  return defineTool({
    ...TOOLS.producthunt_graphql,
    input: z.object({
      query: z.string().min(1),
      variables: z.record(z.string(), z.unknown()).optional(),
    }),
    output: z.object({ data: z.unknown(), ...metaShape }),
    async handler(args, { signal }) {
      ready();
      checkReadOnlyQuery(args.query);
      const result = await client.query<unknown>(args.query, args.variables ?? {}, signal);
      return { data: result.data, ...meta(result) };
    },
  });
}

function listTopicsTool(deps: ProductHuntToolDeps): ToolDefinition {
  return connectionTool(deps, TOOLS.producthunt_list_topics, {
    input: z.object({
      query: z.string().optional(),
      order: upperEnum(['FOLLOWERS_COUNT', 'NEWEST']).optional(),
      followed_by_user_id: z.string().optional(),
    }),
    paging: [20, 'short'],
    field: 'topics',
    item: topicSchema,
    document: LIST_TOPICS,
    request: (args) => ({
      variables: {
        query: args.query,
        order: args.order ?? 'FOLLOWERS_COUNT',
        ...camelVariables(args, ['followed_by_user_id']),
      },
    }),
  });
}

function getTopicTool(deps: ProductHuntToolDeps): ToolDefinition {
  return lookupTool(deps, TOOLS.producthunt_get_topic, {
    input: z.object(idOrSlug),
    output: topicSchema.extend(metaShape),
    document: GET_TOPIC,
    field: 'topic',
    by: ['id', 'slug'],
    shape: (topic) => topic,
  });
}

function listCollectionsTool(deps: ProductHuntToolDeps): ToolDefinition {
  return connectionTool(deps, TOOLS.producthunt_list_collections, {
    input: z.object({
      featured: z.boolean().optional(),
      user_id: z.string().optional(),
      post_id: z.string().optional(),
      order: upperEnum(['FOLLOWERS_COUNT', 'NEWEST', 'FEATURED_AT']).optional(),
    }),
    paging: [10, 'short'],
    field: 'collections',
    item: collectionSchema,
    document: LIST_COLLECTIONS,
    map: (collection) => ({ ...collection, user: mapUser(collection.user as Obj) }),
    request: (args) => ({
      variables: {
        order: args.order ?? 'FOLLOWERS_COUNT',
        ...camelVariables(args, ['featured', 'user_id', 'post_id']),
      },
    }),
  });
}

function getCollectionTool(deps: ProductHuntToolDeps): ToolDefinition {
  return lookupTool(deps, TOOLS.producthunt_get_collection, {
    input: z.object(idOrSlug),
    paging: [10, 'short'],
    output: collectionSchema.extend({
      posts: z.array(postSchema),
      posts_page: z.object(pageShape),
      ...metaShape,
    }),
    document: GET_COLLECTION,
    field: 'collection',
    by: ['id', 'slug'],
    shape(collection) {
      const { posts: connection, ...rest } = collection as Obj & { posts?: Connection };
      const posts = nodes(connection).map(mapPost);
      return {
        ...rest,
        user: mapUser(rest.user as Obj),
        posts,
        posts_page: { count: posts.length, ...page(connection) },
      };
    },
  });
}

function getUserTool(deps: ProductHuntToolDeps): ToolDefinition {
  return lookupTool(deps, TOOLS.producthunt_get_user, {
    input: z.object({ ...idOrUsername, posts: pageSize(5) }),
    output: userSchema.extend({ made_posts: z.array(postSchema), ...metaShape }),
    document: GET_USER,
    field: 'user',
    by: ['id', 'username'],
    variables: (args) => ({ posts: clampFirst(args.posts, 5) }),
    shape(user) {
      const { madePosts, ...profile } = user as Obj & { madePosts?: Connection };
      return { ...mapUser(profile), made_posts: nodes(madePosts).map(mapPost) };
    },
  });
}

function listUserPostsTool(deps: ProductHuntToolDeps): ToolDefinition {
  return lookupTool(deps, TOOLS.producthunt_list_user_posts, {
    input: z.object({
      ...idOrUsername,
      kind: z.enum(['made', 'voted', 'submitted']).default('made'),
    }),
    paging: [10, 'short'],
    output: z.object({
      user: userSchema,
      kind: z.string(),
      posts: z.array(postSchema),
      ...pageShape,
      ...metaShape,
    }),
    document: (args) => USER_POSTS[args.kind],
    field: 'user',
    by: ['id', 'username'],
    shape(user, args) {
      const { posts: connection, ...profile } = user as Obj & { posts?: Connection };
      const posts = nodes(connection).map(mapPost);
      return { user: mapUser(profile), kind: args.kind, count: posts.length, posts, ...page(connection) };
    },
  });
}

function viewerTool({ client, ready }: ProductHuntToolDeps): ToolDefinition {
  return defineTool({
    ...TOOLS.producthunt_viewer,
    input: z.object({}),
    output: userSchema.extend(metaShape),
    async handler(_args, { signal }) {
      ready();
      const result = await client.query<{ viewer: { user: Obj } | null }>(VIEWER, {}, signal);
      if (!result.data.viewer?.user) {
        throw new UpstreamError(
          'NOT_FOUND',
          'The token has no user (client-credentials tokens are application-level). Set PRODUCTHUNT_TOKEN to a developer token to use this tool.',
        );
      }
      return { ...mapUser(result.data.viewer.user), ...meta(result) } as never;
    },
  });
}
