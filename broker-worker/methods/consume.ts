import { consumeInput } from '../../shared/event/schemas.ts';
import type { ConsumeCallResult } from '../../shared/ipc/messages.ts';
import { RESULT_BYTE_BUDGET } from '../consume/group-consumer.ts';
import { MethodError } from '../errors.ts';
import type { CallContext } from '../ipc/server.ts';
import { type MethodContext, topicCall } from './context.ts';

/** Part of the call's deadline kept for answering after the poll itself. */
const ANSWER_RESERVE_MS = 1000;

const ANSWERED_NOW_HINT =
  'The gateway is shutting down, so this poll answered early with the messages that were ready (they are committed once this answer was written). Poll again in a moment for more.';

const ANSWERED_NOW_GROUPLESS_HINT =
  'The gateway is shutting down, so this read answered early with the messages read so far. Read again in a moment for more.';

const JOINING_HINT =
  "The consumer group is still joining (the broker delays a new group's first join, 3 s by default), so nothing could be read yet. Poll again; the group stays joined and later polls answer at once.";

export async function consume(
  ctx: MethodContext,
  params: unknown,
  call: CallContext,
): Promise<ConsumeCallResult> {
  const { input, clients, topic } = topicCall(ctx, consumeInput, params);

  const now = Date.now();
  const reserve = Math.min(ANSWER_RESERVE_MS, Math.max(0, Math.floor((call.deadlineAt - now) / 4)));
  const endAt = Math.min(now + input.timeout_ms, call.deadlineAt - reserve);

  if (input.from === 'group') {
    const group = input.group ?? ctx.settings.broker.consumerGroup;
    if (!group) {
      throw new MethodError(
        'NO_DEFAULT_GROUP',
        'No consumer group was given and the server has no default group (BROKER_CONSUMER_GROUP is not set). ' +
          'Pass `group`, or read without a group using from="earliest" or from="latest".',
      );
    }
    await clients.topics.requireExists(topic);
    const consumer = clients.consumers.acquire(group, topic);
    const outcome = await consumer.poll({
      max: input.max,
      endAt,
      windowEndAt: call.deadlineAt - reserve,
      signal: call.signal,
      owner: call.link,
      answerNow: call.answerNow,
    });
    // Shutdown outranks joining: polling this gateway again soon will not work, whatever the group's state.
    const hint = call.answerNow.aborted ? ANSWERED_NOW_HINT : outcome.joining ? JOINING_HINT : undefined;
    return {
      count: outcome.messages.length,
      group,
      from: 'group',
      topic,
      messages: outcome.messages,
      ...(outcome.leaseId === null ? {} : { lease: outcome.leaseId }),
      ...(outcome.joining ? { joining: true } : {}),
      ...(hint === undefined ? {} : { hint }),
    };
  }

  await clients.topics.requireExists(topic);
  const messages = await clients.groupless.read({
    topic,
    from: input.from,
    max: input.max,
    endAt,
    signal: call.signal,
    answerNow: call.answerNow,
    byteBudget: RESULT_BYTE_BUDGET,
  });
  return {
    count: messages.length,
    group: '',
    from: input.from,
    topic,
    messages,
    ...(call.answerNow.aborted ? { hint: ANSWERED_NOW_GROUPLESS_HINT } : {}),
  };
}
