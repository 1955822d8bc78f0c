import { type PublishResult, publishInput } from '../../shared/event/schemas.ts';
import type { CallContext } from '../ipc/server.ts';
import { type MethodContext, requireClients, resolveTopic } from './context.ts';
import { parseParams } from './params.ts';

export async function publish(
  ctx: MethodContext,
  params: unknown,
  _call: CallContext,
): Promise<PublishResult> {
  const input = parseParams(publishInput, params);
  const clients = requireClients(ctx);
  const topic = resolveTopic(ctx, input.topic);
  const partitions = await clients.topics.requireExists(topic);
  return clients.publisher.publish(
    { topic, value: input.value, key: input.key, headers: input.headers },
    partitions,
    async () => {
      clients.topics.invalidate();
      try {
        await clients.topics.requireExists(topic);
        return true;
      } catch {
        return false;
      }
    },
  );
}
