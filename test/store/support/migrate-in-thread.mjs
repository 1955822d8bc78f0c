// Worker threads do not inherit tsx's loader: register it, then load the TypeScript body.
import { register } from 'tsx/esm/api';

register();
await import('./migrate-in-thread.ts');
