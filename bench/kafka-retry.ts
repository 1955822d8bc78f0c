/**
 * Retrying what Kafka itself calls retriable. A topic created moments before can still be
 * moving its leadership when the bench asks for its offsets: the broker answers
 * NOT_LEADER_OR_FOLLOWER (or LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION), and
 * kafkajs's admin.fetchTopicOffsets gives up at once on any of them but the last. Such an
 * answer carries `retriable: true` (the protocol's own flag, as kafkajs maps it), so that
 * flag decides, not a list of names kept here.
 */

interface ErrorLike {
  retriable?: unknown;
  cause?: unknown;
  originalError?: unknown;
  errors?: unknown;
}

/** True when the error, or one it wraps (kafkajs nests them as originalError, cause, errors), is retriable. */
export function isRetriable(error: unknown): boolean {
  const queue: unknown[] = [error];
  for (let seen = 0; queue.length > 0 && seen < 20; seen++) {
    const next = queue.shift();
    if (!next || typeof next !== 'object') continue;
    const item = next as ErrorLike;
    if (item.retriable === true) return true;
    queue.push(item.cause, item.originalError);
    if (Array.isArray(item.errors)) queue.push(...item.errors);
  }
  return false;
}

export interface RetryOptions {
  /** Give up once this much time has passed (the last error is rethrown). */
  deadlineMs?: number;
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** Told of each retried failure, so a slow phase says why it is slow. */
  onRetry?: (error: unknown, attempt: number) => void;
}

/**
 * Runs `attempt` until it succeeds, a non-retriable error is thrown, or the deadline passes.
 * `attempt` should build what it needs afresh (a new admin client): a retried call on the
 * same client may keep answering from the stale metadata that made it fail.
 */
export async function retryRetriable<T>(attempt: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const { deadlineMs = 30_000, firstDelayMs = 100, maxDelayMs = 2_000, onRetry } = options;
  const until = Date.now() + deadlineMs;
  let delay = firstDelayMs;
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isRetriable(error) || Date.now() + delay > until) throw error;
      onRetry?.(error, tries);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, maxDelayMs);
    }
  }
}
