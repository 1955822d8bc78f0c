/**
 * Every document the namespace sends, as constants with variables: tool input never becomes
 * GraphQL text. test/producthunt validates each one against our SDL of the fields we use.
 */
const POST_SUMMARY = `fragment PostSummary on Post {
  id name tagline slug url votesCount commentsCount reviewsRating featuredAt createdAt
  thumbnail { url }
  topics(first: 5) { edges { node { name slug } } }
}`;

const USER_REF = `fragment UserRef on User { id name username url }`;

const USER_FIELDS = `fragment UserFields on User {
  id name username headline url twitterUsername websiteUrl profileImage createdAt
}`;

const COMMENT_FIELDS = `fragment CommentFields on Comment {
  id body createdAt votesCount url parentId user { ...UserRef }
}`;

const TOPIC_FIELDS = `fragment TopicFields on Topic {
  id name slug description followersCount postsCount url createdAt
}`;

const PAGE = 'totalCount pageInfo { endCursor hasNextPage }';

export const LIST_POSTS = `query ListPosts($first: Int!, $after: String, $order: PostsOrder!, $featured: Boolean, $topic: String, $postedAfter: DateTime, $postedBefore: DateTime, $twitterUrl: String) {
  posts(first: $first, after: $after, order: $order, featured: $featured, topic: $topic, postedAfter: $postedAfter, postedBefore: $postedBefore, twitterUrl: $twitterUrl) {
    ${PAGE} edges { node { ...PostSummary } }
  }
}
${POST_SUMMARY}`;

export const GET_POST = `query GetPost($id: ID, $slug: String) {
  post(id: $id, slug: $slug) {
    id name tagline description slug url website votesCount commentsCount reviewsRating featuredAt createdAt
    thumbnail { url }
    media { url type }
    topics(first: 10) { edges { node { id name slug } } }
    makers { ...UserRef }
    user { ...UserRef }
  }
}
${USER_REF}`;

export const POST_COMMENTS = `query PostComments($id: ID, $slug: String, $first: Int!, $after: String, $order: CommentsOrder!) {
  post(id: $id, slug: $slug) {
    id name
    comments(first: $first, after: $after, order: $order) { ${PAGE} edges { node { ...CommentFields } } }
  }
}
${COMMENT_FIELDS}
${USER_REF}`;

export const GET_COMMENT = `query GetComment($id: ID!, $first: Int!, $after: String, $order: CommentsOrder!) {
  comment(id: $id) {
    ...CommentFields
    replies(first: $first, after: $after, order: $order) { ${PAGE} edges { node { ...CommentFields } } }
  }
}
${COMMENT_FIELDS}
${USER_REF}`;

export const LIST_TOPICS = `query ListTopics($first: Int!, $after: String, $query: String, $order: TopicsOrder!, $followedByUserId: ID) {
  topics(first: $first, after: $after, query: $query, order: $order, followedByUserId: $followedByUserId) {
    ${PAGE} edges { node { ...TopicFields } }
  }
}
${TOPIC_FIELDS}`;

export const GET_TOPIC = `query GetTopic($id: ID, $slug: String) { topic(id: $id, slug: $slug) { ...TopicFields } }
${TOPIC_FIELDS}`;

export const LIST_COLLECTIONS = `query ListCollections($first: Int!, $after: String, $order: CollectionsOrder!, $featured: Boolean, $userId: ID, $postId: ID) {
  collections(first: $first, after: $after, order: $order, featured: $featured, userId: $userId, postId: $postId) {
    ${PAGE} edges { node { id name tagline followersCount url createdAt user { ...UserRef } } }
  }
}
${USER_REF}`;

export const GET_COLLECTION = `query GetCollection($id: ID, $slug: String, $first: Int!, $after: String) {
  collection(id: $id, slug: $slug) {
    id name tagline description followersCount url coverImage createdAt user { ...UserRef }
    posts(first: $first, after: $after) { ${PAGE} edges { node { ...PostSummary } } }
  }
}
${POST_SUMMARY}
${USER_REF}`;

export const GET_USER = `query GetUser($id: ID, $username: String, $posts: Int!) {
  user(id: $id, username: $username) {
    ...UserFields
    madePosts(first: $posts) { totalCount edges { node { ...PostSummary } } }
  }
}
${USER_FIELDS}
${POST_SUMMARY}`;

export const VIEWER = `query Viewer { viewer { user { ...UserFields } } }
${USER_FIELDS}`;

function userPosts(field: 'madePosts' | 'votedPosts' | 'submittedPosts'): string {
  return `query UserPosts($id: ID, $username: String, $first: Int!, $after: String) {
  user(id: $id, username: $username) {
    ...UserFields
    posts: ${field}(first: $first, after: $after) { ${PAGE} edges { node { ...PostSummary } } }
  }
}
${USER_FIELDS}
${POST_SUMMARY}`;
}

export const USER_POSTS = {
  made: userPosts('madePosts'),
  voted: userPosts('votedPosts'),
  submitted: userPosts('submittedPosts'),
} as const;

export const ALL_QUERIES = {
  LIST_POSTS,
  GET_POST,
  POST_COMMENTS,
  GET_COMMENT,
  LIST_TOPICS,
  GET_TOPIC,
  LIST_COLLECTIONS,
  GET_COLLECTION,
  GET_USER,
  VIEWER,
  USER_POSTS_MADE: USER_POSTS.made,
  USER_POSTS_VOTED: USER_POSTS.voted,
  USER_POSTS_SUBMITTED: USER_POSTS.submitted,
};
