// Piscina threads do not inherit tsx's loader: register it, then hand piscina the TypeScript task.
import { register } from 'tsx/esm/api';

register();
const task = await import('./embed-task.ts');
export default task.default;
