/**
 * Turns kafkajs failures into MethodErrors an agent can act on. kafkajs wraps the real
 * cause in retry and aggregate errors, so the whole chain is searched for the most
 * specific known failure before falling back to a generic broker error.
 */
import { MethodError } from '../errors.ts';

interface ErrorLike {
  name?: string;
  message?: string;
  type?: string;
  code?: string;
  retriable?: boolean;
  cause?: unknown;
  errors?: unknown[];
  broker?: string;
}

function chain(error: unknown): ErrorLike[] {
  const found: ErrorLike[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && found.length < 20) {
    const next = queue.shift();
    if (!next || typeof next !== 'object') continue;
    const item = next as ErrorLike;
    found.push(item);
    if (item.cause) queue.push(item.cause);
    if (Array.isArray(item.errors)) queue.push(...item.errors);
  }
  return found;
}

const AUTH_TYPES = new Set([
  'SASL_AUTHENTICATION_FAILED',
  'ILLEGAL_SASL_STATE',
  'UNSUPPORTED_SASL_MECHANISM',
]);
const ACL_TYPES = new Set([
  'TOPIC_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
]);
const UNREACHABLE_NAMES = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSBrokerNotFound',
]);

export function isAuthenticationFailure(error: unknown): boolean {
  return chain(error).some(
    (e) => e.name === 'KafkaJSSASLAuthenticationError' || AUTH_TYPES.has(e.type ?? ''),
  );
}

/** True when the chain says the topic or partition does not exist. */
export function isUnknownTopic(error: unknown): boolean {
  return chain(error).some((e) => e.type === 'UNKNOWN_TOPIC_OR_PARTITION');
}

export function hasErrorType(error: unknown, type: string): boolean {
  return chain(error).some((e) => e.type === type);
}

export function unknownTopicError(topic: string): MethodError {
  return new MethodError(
    'UNKNOWN_TOPIC',
    `Topic "${topic}" does not exist on the cluster (topics are not created automatically). ` +
      'Check the name with event_topics, or create it with event_create_topic ' +
      '(which needs BROKER_ALLOW_TOPIC_ADMIN=true on the server).',
  );
}

/**
 * @param action what was being done, e.g. `publish to "orders"`, used in the message.
 */
export function describeKafkaError(error: unknown, action: string): MethodError {
  if (error instanceof MethodError) return error;
  const links = chain(error);
  const first = links[0];

  const auth = links.find((e) => e.name === 'KafkaJSSASLAuthenticationError' || AUTH_TYPES.has(e.type ?? ''));
  if (auth) {
    const mechanism =
      auth.type === 'UNSUPPORTED_SASL_MECHANISM'
        ? ' The broker does not accept this SASL mechanism; check BROKER_SASL_MECHANISM.'
        : '';
    return new MethodError(
      'AUTHENTICATION_FAILED',
      `The broker rejected the SASL credentials while trying to ${action}: ${auth.message}.${mechanism} ` +
        'Check BROKER_API_KEY and BROKER_API_SECRET (and BROKER_SASL_MECHANISM) on the server; retrying will not help.',
    );
  }

  const acl = links.find((e) => ACL_TYPES.has(e.type ?? ''));
  if (acl) {
    return new MethodError(
      'BROKER_ERROR',
      `The broker refused to ${action}: ${acl.message}. The credentials are valid but lack permission ` +
        '(an ACL or role for this topic or consumer group is missing); ask the cluster administrator.',
    );
  }

  const unreachable = links.find(
    (e) =>
      UNREACHABLE_NAMES.has(e.name ?? '') ||
      ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT'].includes(e.code ?? ''),
  );
  const tls = links.find((e) =>
    /certificate|SSL routines|TLS|EPROTO|wrong version number/i.test(`${e.message} ${e.code}`),
  );
  if (tls) {
    return new MethodError(
      'BROKER_ERROR',
      `Could not open a TLS connection to the broker to ${action}: ${tls.message}. ` +
        'If the brokers use a private CA, set BROKER_SSL_CA_FILE; if the listener is not TLS, set BROKER_SECURITY_PROTOCOL to SASL_PLAINTEXT or PLAINTEXT.',
      true,
    );
  }
  if (unreachable) {
    return new MethodError(
      'BROKER_ERROR',
      `Could not reach the Kafka broker to ${action}: ${unreachable.message}. ` +
        'Check BROKER_BOOTSTRAP_SERVERS and BROKER_SECURITY_PROTOCOL, and that the broker is running; then retry.',
      true,
    );
  }

  const message = first?.message ?? String(error);
  const retriable = links.some((e) => e.retriable === true);
  return new MethodError('BROKER_ERROR', `The broker failed to ${action}: ${message}.`, retriable);
}
