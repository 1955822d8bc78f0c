/**
 * `npm run memory`: the process entry of the memory command. The command lives in the memory
 * namespace; import and export also need the key store (does the key exist, is it revoked),
 * which no namespace may open, so this entry wires the two together.
 */

import { withStore } from './accounts/with-store.ts';
import { CliFailure } from './cli/program.ts';
import { runMemoryCli } from './namespaces/memory/cli.ts';

await runMemoryCli({
  lookUpKey: async (config, id) => (await withStore(config, (store) => store.keyById(id))) ?? null,
  failure: (error) => (error instanceof CliFailure ? error.message : null),
});
