import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { ANNOTATIONS } from '../../upstream/namespace-kit.ts';
import {
  GET_COLLECTION,
  GET_TOPIC,
  GET_USER,
  LIST_COLLECTIONS,
  LIST_TOPICS,
  USER_POSTS,
  VIEWER,
} from './queries.ts';
import {
  clampFirst,
  collectionSchema,
  mapPost,
  mapUser,
  meta,
  metaShape,
  nodes,
  notFound,
  page,
  pageShape,
  postSchema,
  REDACTION_NOTE,
  requireOne,
  topicSchema,
  upperEnum,
  userSchema,
} from './shape.ts';
import type { ProductHuntToolDeps } from './tools-posts.ts';

type Conn = Parameters<typeof nodes>[0];
type Obj = Record<string, unknown>;

const first = (fallback: number) =>
  z.number().int().optional().describe(`Page size (default ${fallback}, at most 20).`);
const after = z.string().optional().describe('Cursor from a previous end_cursor.');

export function otherTools(deps: ProductHuntToolDeps): ToolDefinition[] {
  return [
    listTopicsTool(deps),
    getTopicTool(deps),
    listCollectionsTool(deps),
    getCollectionTool(deps),
    getUserTool(deps),
    listUserPostsTool(deps),
    viewerTool(deps),
  ];
}

function listTopicsTool({ client, ready }: ProductHuntToolDeps): ToolDefinition {
  return defineTool({
    name: 'producthunt_list_topics',
    title: 'List or search Product Hunt topics',
    description:
      'Lists topics, optionally matching query (name or alias) or followed by a user; order FOLLOWERS_COUNT (default) or NEWEST; paged with first/after.',
    input: z.object({
      query: z.string().optional(),
      order: upperEnum(['FOLLOWERS_COUNT', 'NEWEST']).optional(),
      followed_by_user_id: z.string().optional(),
      first: first(20),
      after,
    }),
    output: z.object({ topics: z.array(topicSchema), ...pageShape, ...metaShape }),
    annotations: ANNOTATIONS.read,
    async handler(args, { signal }) {
      ready();
      const result = await client.query<{ topics: Conn }>(
        LIST_TOPICS,
        {
          first: clampFirst(args.first, 20),
          after: args.after,
          query: args.query,
          order: args.order ?? 'FOLLOWERS_COUNT',
          followedByUserId: args.followed_by_user_id,
        },
        signal,
      );
      const topics = nodes(result.data.topics);
      return { count: topics.length, topics, ...page(result.data.topics), ...meta(result) } as never;
    },
  });
}

function getTopicTool({ client, ready }: ProductHuntToolDeps): ToolDefinition {
  return defineTool({
    name: 'producthunt_get_topic',
    title: 'Get one Product Hunt topic',
    description: 'One topic by id or slug: description, followers and posts counts, URL.',
    input: z.object({ id: z.string().optional(), slug: z.string().optional() }),
    output: topicSchema.extend(metaShape),
    annotations: ANNOTATIONS.read,
    async handler(args, { signal }) {
      ready();
      const ids = requireOne(args, ['id', 'slug'], 'topic');
      const result = await client.query<{ topic: Obj | null }>(GET_TOPIC, ids, signal);
      if (!result.data.topic) throw notFound('topic', ids);
      return { ...result.data.topic, ...meta(result) } as never;
    },
  });
}

function listCollectionsTool({ client, ready }: ProductHuntToolDeps): ToolDefinition {
  return defineTool({
    name: 'producthunt_list_collections',
    title: 'List Product Hunt collections',
    description:
      'Lists curated collections, filtered by featured, user_id or post_id; order FOLLOWERS_COUNT (default), NEWEST or FEATURED_AT; paged.',
    input: z.object({
      featured: z.boolean().optional(),
      user_id: z.string().optional(),
      post_id: z.string().optional(),
      order: upperEnum(['FOLLOWERS_COUNT', 'NEWEST', 'FEATURED_AT']).optional(),
      first: first(10),
      after,
    }),
    output: z.object({ collections: z.array(collectionSchema), ...pageShape, ...metaShape }),
    annotations: ANNOTATIONS.read,
    async handler(args, { signal }) {
      ready();
      const result = await client.query<{ collections: Conn }>(
        LIST_COLLECTIONS,
        {
          first: clampFirst(args.first, 10),
          after: args.after,
          order: args.order ?? 'FOLLOWERS_COUNT',
          featured: args.featured,
          userId: args.user_id,
          postId: args.post_id,
        },
        signal,
      );
      const collections = nodes(result.data.collections).map((c) => ({
        ...c,
        user: mapUser(c.user as Obj),
      }));
      return {
        count: collections.length,
        collections,
        ...page(result.data.collections),
        ...meta(result),
      } as never;
    },
  });
}

function getCollectionTool({ client, ready }: ProductHuntToolDeps): ToolDefinition {
  return defineTool({
    name: 'producthunt_get_collection',
    title: 'Get one Product Hunt collection with its posts',
    description: 'One collection by id or slug, with a page of its posts (first/after).',
    input: z.object({ id: z.string().optional(), slug: z.string().optional(), first: first(10), after }),
    output: collectionSchema.extend({
      posts: z.array(postSchema),
      posts_page: z.object(pageShape),
      ...metaShape,
    }),
    annotations: ANNOTATIONS.read,
    async handler(args, { signal }) {
      ready();
      const ids = requireOne(args, ['id', 'slug'], 'collection');
      const result = await client.query<{ collection: (Obj & { posts?: Conn }) | null }>(
        GET_COLLECTION,
        { ...ids, first: clampFirst(args.first, 10), after: args.after },
        signal,
      );
      const collection = result.data.collection;
      if (!collection) throw notFound('collection', ids);
      const { posts: conn, ...rest } = collection;
      const posts = nodes(conn).map(mapPost);
      return {
        ...rest,
        user: mapUser(rest.user as Obj),
        posts,
        posts_page: { count: posts.length, ...page(conn) },
        ...meta(result),
      } as never;
    },
  });
}

function getUserTool({ client, ready }: ProductHuntToolDeps): ToolDefinition {
  return defineTool({
    name: 'producthunt_get_user',
    title: 'Get a Product Hunt user',
    description: `A user's profile by id or username, with up to \`posts\` (default 5, max 20) posts they made. ${REDACTION_NOTE}`,
    input: z.object({ id: z.string().optional(), username: z.string().optional(), posts: first(5) }),
    output: userSchema.extend({ made_posts: z.array(postSchema), ...metaShape }),
    annotations: ANNOTATIONS.read,
    async handler(args, { signal }) {
      ready();
      const ids = requireOne(args, ['id', 'username'], 'user');
      const result = await client.query<{ user: (Obj & { madePosts?: Conn }) | null }>(
        GET_USER,
        { ...ids, posts: clampFirst(args.posts, 5) },
        signal,
      );
      const user = result.data.user;
      if (!user) throw notFound('user', ids);
      const { madePosts, ...profile } = user;
      return { ...mapUser(profile), made_posts: nodes(madePosts).map(mapPost), ...meta(result) } as never;
    },
  });
}

function listUserPostsTool({ client, ready }: ProductHuntToolDeps): ToolDefinition {
  return defineTool({
    name: 'producthunt_list_user_posts',
    title: "List a Product Hunt user's posts",
    description: `Posts a user (id or username) made, voted for, or submitted (kind, default made), paged with first/after. ${REDACTION_NOTE}`,
    input: z.object({
      id: z.string().optional(),
      username: z.string().optional(),
      kind: z.enum(['made', 'voted', 'submitted']).default('made'),
      first: first(10),
      after,
    }),
    output: z.object({
      user: userSchema,
      kind: z.string(),
      posts: z.array(postSchema),
      ...pageShape,
      ...metaShape,
    }),
    annotations: ANNOTATIONS.read,
    async handler(args, { signal }) {
      ready();
      const ids = requireOne(args, ['id', 'username'], 'user');
      const result = await client.query<{ user: (Obj & { posts?: Conn }) | null }>(
        USER_POSTS[args.kind],
        { ...ids, first: clampFirst(args.first, 10), after: args.after },
        signal,
      );
      const user = result.data.user;
      if (!user) throw notFound('user', ids);
      const { posts: conn, ...profile } = user;
      const posts = nodes(conn).map(mapPost);
      return {
        user: mapUser(profile),
        kind: args.kind,
        count: posts.length,
        posts,
        ...page(conn),
        ...meta(result),
      } as never;
    },
  });
}

function viewerTool({ client, ready }: ProductHuntToolDeps): ToolDefinition {
  return defineTool({
    name: 'producthunt_viewer',
    title: 'The Product Hunt user behind the token',
    description:
      'Profile of the user who owns the configured developer token. A client-credentials token has no user, so this fails with a clear message in that mode.',
    input: z.object({}),
    output: userSchema.extend(metaShape),
    annotations: ANNOTATIONS.read,
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
