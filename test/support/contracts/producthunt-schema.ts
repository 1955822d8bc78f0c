/**
 * Our own SDL of the Product Hunt API v2 fields this project uses, written from the public
 * documentation (schema last changed upstream in 2019). The contract server executes every
 * query against it, so a field or enum value Product Hunt lacks fails here as it would there.
 */
export const PRODUCTHUNT_SDL = `
scalar DateTime

enum PostsOrder { FEATURED_AT VOTES RANKING NEWEST }
enum TopicsOrder { NEWEST FOLLOWERS_COUNT }
enum CollectionsOrder { NEWEST FOLLOWERS_COUNT FEATURED_AT }
enum CommentsOrder { NEWEST VOTES_COUNT }

type PageInfo { endCursor: String hasNextPage: Boolean! hasPreviousPage: Boolean! startCursor: String }

type Media { type: String! url(width: Int, height: Int): String! }

type User {
  id: ID!
  name: String!
  username: String!
  headline: String
  url: String!
  twitterUsername: String
  websiteUrl: String
  profileImage(size: Int): String
  createdAt: DateTime!
  isMaker: Boolean!
  madePosts(first: Int, after: String): PostConnection!
  votedPosts(first: Int, after: String): PostConnection!
  submittedPosts(first: Int, after: String): PostConnection!
}

type Topic {
  id: ID!
  name: String!
  slug: String!
  description: String!
  followersCount: Int!
  postsCount: Int!
  url: String!
  createdAt: DateTime!
}

type Comment {
  id: ID!
  body: String!
  createdAt: DateTime!
  votesCount: Int!
  url: String!
  parentId: ID
  user: User!
  replies(first: Int, after: String, order: CommentsOrder = NEWEST): CommentConnection!
}

type Post {
  id: ID!
  name: String!
  tagline: String!
  description: String
  slug: String!
  url: String!
  website: String!
  votesCount: Int!
  commentsCount: Int!
  reviewsRating: Float!
  featuredAt: DateTime
  createdAt: DateTime!
  thumbnail: Media
  media: [Media!]!
  topics(first: Int, after: String): TopicConnection!
  makers: [User!]!
  user: User!
  comments(first: Int, after: String, order: CommentsOrder = NEWEST): CommentConnection!
}

type Collection {
  id: ID!
  name: String!
  tagline: String!
  description: String
  followersCount: Int!
  url: String!
  coverImage(width: Int, height: Int): String
  createdAt: DateTime!
  user: User!
  posts(first: Int, after: String): PostConnection!
}

type PostEdge { cursor: String! node: Post! }
type PostConnection { edges: [PostEdge!]! pageInfo: PageInfo! totalCount: Int! }
type TopicEdge { cursor: String! node: Topic! }
type TopicConnection { edges: [TopicEdge!]! pageInfo: PageInfo! totalCount: Int! }
type CommentEdge { cursor: String! node: Comment! }
type CommentConnection { edges: [CommentEdge!]! pageInfo: PageInfo! totalCount: Int! }
type CollectionEdge { cursor: String! node: Collection! }
type CollectionConnection { edges: [CollectionEdge!]! pageInfo: PageInfo! totalCount: Int! }

type Viewer { user: User! }

type Query {
  post(id: ID, slug: String): Post
  posts(first: Int, after: String, featured: Boolean, postedBefore: DateTime, postedAfter: DateTime, topic: String, order: PostsOrder = RANKING, twitterUrl: String): PostConnection!
  topic(id: ID, slug: String): Topic
  topics(first: Int, after: String, followedByUserId: ID, query: String, order: TopicsOrder = NEWEST): TopicConnection!
  collection(id: ID, slug: String): Collection
  collections(first: Int, after: String, postId: ID, userId: ID, featured: Boolean, order: CollectionsOrder = FOLLOWERS_COUNT): CollectionConnection!
  comment(id: ID!): Comment
  user(id: ID, username: String): User
  viewer: Viewer
}

type GoalPayload { ok: Boolean! }
type Mutation { goalMarkAsComplete(goalId: ID!): GoalPayload! }
`;
