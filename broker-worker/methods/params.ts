/** Re-validation of call parameters: the IPC link is a trust boundary, whatever the gateway checked. */
import type { z } from 'zod';
import { MethodError } from '../errors.ts';

export function parseParams<S extends z.ZodType>(schema: S, params: unknown): z.output<S> {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  throw new MethodError(
    'INVALID_ARGUMENT',
    `Invalid arguments: ${field}${issue?.message ?? 'invalid value'}.`,
  );
}
