/**
 * OpenAI chat-completions contract server. Enforces what the API rejects: a missing or wrong
 * bearer key (401), a body without model/messages, tools that are not function tools, a
 * `tool` message whose tool_call_id answers no earlier assistant tool call, an unknown
 * response_format, and json_object mode without the word "json" in the messages (400). Each answer
 * comes from a script the test supplies, so tool-calling turns are deterministic.
 */
import { type LoopbackServer, sendJson, startLoopback } from './loopback.ts';

export interface ScriptedTurn {
  content?: string;
  tool_calls?: Array<{ name: string; arguments: string }>;
}

export interface ChatBody {
  model: string;
  messages: Array<{
    role: string;
    content: string | null;
    tool_call_id?: string;
    tool_calls?: Array<{ id: string }>;
  }>;
  tools?: Array<{ type: string; function: { name: string; parameters: unknown } }>;
  max_completion_tokens?: number;
  response_format?: { type: string };
}

export type Script = (body: ChatBody, turn: number) => ScriptedTurn;

export interface OpenAiContract {
  server: LoopbackServer;
  url: string;
  /** Replaced per test; `turn` counts completions since the last reset. */
  script: Script;
  bodies: ChatBody[];
  reset(script: Script): void;
  close(): Promise<void>;
}

function invalid(res: Parameters<typeof sendJson>[0], message: string) {
  sendJson(res, 400, { error: { message, type: 'invalid_request_error', param: null, code: null } });
}

export async function startOpenAiContract(apiKey: string): Promise<OpenAiContract> {
  let calls = 0;
  const contract: OpenAiContract = {
    server: undefined as unknown as LoopbackServer,
    url: '',
    script: () => ({ content: 'no script' }),
    bodies: [],
    reset(script) {
      contract.script = script;
      contract.bodies.length = 0;
      calls = 0;
    },
    close: () => contract.server.close(),
  };
  contract.server = await startLoopback((req, res) => {
    if (req.method !== 'POST' || req.path !== '/v1/chat/completions') {
      sendJson(res, 404, {
        error: { message: `Unknown request URL: ${req.method} ${req.path}`, type: 'invalid_request_error' },
      });
      return;
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      sendJson(res, 401, {
        error: {
          message: 'Incorrect API key provided.',
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      });
      return;
    }
    let body: ChatBody;
    try {
      body = JSON.parse(req.body) as ChatBody;
    } catch {
      invalid(res, 'We could not parse the JSON body of your request.');
      return;
    }
    if (typeof body.model !== 'string' || !Array.isArray(body.messages) || body.messages.length === 0) {
      invalid(res, "you must provide a model parameter and a non-empty 'messages' array");
      return;
    }
    for (const tool of body.tools ?? []) {
      if (tool.type !== 'function' || typeof tool.function?.name !== 'string') {
        invalid(res, 'tools must be function tools with a name');
        return;
      }
    }
    const format = body.response_format?.type;
    if (format !== undefined && !['text', 'json_object', 'json_schema'].includes(format)) {
      invalid(
        res,
        `Invalid value: '${format}'. Supported values are: 'json_object', 'json_schema', and 'text'.`,
      );
      return;
    }
    if (format === 'json_object' && !body.messages.some((m) => /json/i.test(m.content ?? ''))) {
      invalid(
        res,
        "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
      );
      return;
    }
    const answered = new Set<string>();
    for (const message of body.messages) {
      for (const call of message.tool_calls ?? []) answered.add(call.id);
      if (message.role === 'tool' && !answered.has(message.tool_call_id ?? '')) {
        invalid(
          res,
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        );
        return;
      }
    }
    contract.bodies.push(body);
    const turn = contract.script(body, calls++);
    const toolCalls = turn.tool_calls?.map((call, i) => ({
      id: `call_${calls}_${i}`,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
    sendJson(res, 200, {
      id: `chatcmpl-${calls}`,
      object: 'chat.completion',
      created: 1_700_000_000,
      model: body.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: turn.content ?? null,
            ...(toolCalls ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: toolCalls ? 'tool_calls' : 'stop',
        },
      ],
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
    });
  });
  contract.url = `${contract.server.url}/v1`;
  return contract;
}
