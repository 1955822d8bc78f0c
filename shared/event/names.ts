/**
 * Topic and group name rules as plain checks, for the settings read at start
 * (BROKER_DEFAULT_TOPIC, BROKER_CONSUMER_GROUP): the worker reads them without loading zod,
 * which an idle worker otherwise never needs. The tool schemas in schemas.ts state the same
 * rules with the same messages (test/broker-worker/settings.test.ts holds them together).
 */
import { TOPIC_NAME_MAX_LENGTH } from './limits.ts';

/** Kafka's own rule for legal topic names (kafka.common.Topic). */
export const TOPIC_NAME_PATTERN = /^[a-zA-Z0-9._-]+$/;
export const GROUP_NAME_MAX_LENGTH = 255;

/** What is wrong with a topic name, or null. */
export function topicNameProblem(name: string): string | null {
  if (name.length < 1) return 'topic must not be empty';
  if (name.length > TOPIC_NAME_MAX_LENGTH) return `topic must be at most ${TOPIC_NAME_MAX_LENGTH} characters`;
  if (!TOPIC_NAME_PATTERN.test(name)) return 'topic may contain only ASCII letters, digits, ".", "_" and "-"';
  if (name === '.' || name === '..') return 'topic must not be "." or ".."';
  return null;
}

/** What is wrong with a consumer group name, or null. */
export function groupNameProblem(name: string): string | null {
  if (name.length < 1) return 'group must not be empty';
  if (name.length > GROUP_NAME_MAX_LENGTH) return `group must be at most ${GROUP_NAME_MAX_LENGTH} characters`;
  return null;
}
