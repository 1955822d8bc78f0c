/**
 * The broker calls besides `status`, in one module the service imports on the first call:
 * their parameter schemas are zod, which an idle worker (answering only `status` and the
 * probe) never needs resident (about 4 MiB).
 */
export { consume } from './consume.ts';
export { publish } from './publish.ts';
export { settle } from './settle.ts';
export { createTopic, deleteTopic, topics } from './topics.ts';
