/**
 * A toy sixth namespace, exactly as docs/namespaces.md writes one: one folder, one
 * defineNamespace(). The contract suite mounts it beside the five real ones, so what the
 * docs promise (mounting, capabilities, settings, error codes) is checked, not just shown.
 */
import { z } from 'zod';
import { defineNamespace, envSetting } from '../../../gateway/mcp/namespace-contract.ts';
import { defineTool, ToolError } from '../../../gateway/mcp/tool.ts';

export const exampleNamespace = defineNamespace({
  name: 'example',
  title: 'Example: greets people',
  version: '0.1.0',
  instructions: 'Greets whoever you name. Call example_capabilities first when a tool fails.',
  // Every setting is optional or defaulted: an empty environment must parse.
  settings: z.object({
    EXAMPLE_GREETING: envSetting.text().default('Hello'),
    EXAMPLE_MAX_NAME: envSetting.int(1, 100).default('40'),
  }),
  errorCodes: { NAME_TOO_LONG: 'The name is longer than EXAMPLE_MAX_NAME; shorten it.' },
  create(settings) {
    const maxName = Number(settings.EXAMPLE_MAX_NAME);
    return {
      // Built by the namespace's first request, not at start.
      tools: async () => [
        defineTool({
          name: 'example_greet',
          title: 'Greet someone',
          description: 'Answers with a greeting for `name`, in the greeting the operator set.',
          input: z.object({ name: z.string().min(1) }),
          output: z.object({ greeting: z.string() }),
          annotations: { readOnlyHint: true, openWorldHint: false },
          async handler({ name }) {
            if (name.length > maxName)
              throw new ToolError('NAME_TOO_LONG', `name has ${name.length} characters; at most ${maxName}`);
            return { greeting: `${settings.EXAMPLE_GREETING}, ${name}!` };
          },
        }),
      ],
      capabilities: async () => ({
        ready: true,
        configured: true,
        settings: { greeting: settings.EXAMPLE_GREETING, max_name: maxName },
      }),
      close: async () => {},
    };
  },
});
