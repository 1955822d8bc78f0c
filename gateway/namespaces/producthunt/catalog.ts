/** What tools/list says about each producthunt tool besides its schemas: said here only. */
import { toolCatalog } from '../../upstream/tool-catalog.ts';
import { REDACTION_NOTE } from './shape.ts';

export const TOOLS = toolCatalog({
  producthunt_list_posts: [
    'read',
    'List Product Hunt launches',
    'Lists posts (launches) with optional filters: order RANKING (default) | NEWEST | VOTES | FEATURED_AT, featured, topic slug, posted_after/posted_before (ISO-8601), twitter_url. Paged with first/after; returns end_cursor and has_next_page.',
  ],
  producthunt_leaderboard: [
    'read',
    'Product Hunt daily leaderboard',
    "The featured launches of one Product Hunt day, ranked as on the site. A day runs midnight to midnight Pacific time (Product Hunt's clock); date defaults to today in Pacific time.",
  ],
  producthunt_get_post: [
    'read',
    'Get one Product Hunt post',
    `One post in full (description, website, media, topics, makers, hunter) by id or slug. ${REDACTION_NOTE}`,
  ],
  producthunt_get_post_comments: [
    'read',
    'Comments on a Product Hunt post',
    `Comments on a post (by id or slug), ordered by VOTES_COUNT (default) or NEWEST, paged with first/after. ${REDACTION_NOTE}`,
  ],
  producthunt_get_comment: [
    'read',
    'Get one Product Hunt comment with replies',
    `One comment by id, with its replies (ordered VOTES_COUNT or NEWEST, paged). ${REDACTION_NOTE}`,
  ],
  producthunt_graphql: [
    'read',
    'Run a read-only Product Hunt GraphQL query',
    'Escape hatch: runs one GraphQL query (no mutation or subscription; at most 8,000 characters and 8 levels deep) against the Product Hunt API v2 with optional variables. Prefer the specific tools; every field costs rate budget.',
  ],
  producthunt_list_topics: [
    'read',
    'List or search Product Hunt topics',
    'Lists topics, optionally matching query (name or alias) or followed by a user; order FOLLOWERS_COUNT (default) or NEWEST; paged with first/after.',
  ],
  producthunt_get_topic: [
    'read',
    'Get one Product Hunt topic',
    'One topic by id or slug: description, followers and posts counts, URL.',
  ],
  producthunt_list_collections: [
    'read',
    'List Product Hunt collections',
    'Lists curated collections, filtered by featured, user_id or post_id; order FOLLOWERS_COUNT (default), NEWEST or FEATURED_AT; paged.',
  ],
  producthunt_get_collection: [
    'read',
    'Get one Product Hunt collection with its posts',
    'One collection by id or slug, with a page of its posts (first/after).',
  ],
  producthunt_get_user: [
    'read',
    'Get a Product Hunt user',
    `A user's profile by id or username, with up to \`posts\` (default 5, max 20) posts they made. ${REDACTION_NOTE}`,
  ],
  producthunt_list_user_posts: [
    'read',
    "List a Product Hunt user's posts",
    `Posts a user (id or username) made, voted for, or submitted (kind, default made), paged with first/after. ${REDACTION_NOTE}`,
  ],
  producthunt_viewer: [
    'read',
    'The Product Hunt user behind the token',
    'Profile of the user who owns the configured developer token. A client-credentials token has no user, so this fails with a clear message in that mode.',
  ],
});
