import type { Logger } from 'pino';
import { z } from 'zod';
import { UpstreamError } from '../../upstream/errors.ts';
import { createUpstreamHttp, type ErrorDescription } from '../../upstream/http.ts';

/** The part of OpenAI's chat completions API the finder uses: function tools, one choice. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

const completion = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          role: z.literal('assistant'),
          content: z.string().nullable().optional(),
          tool_calls: z
            .array(
              z.object({
                id: z.string(),
                type: z.literal('function'),
                function: z.object({ name: z.string(), arguments: z.string() }),
              }),
            )
            .optional(),
        }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: z.object({ total_tokens: z.number() }).partial().optional(),
});

function describeOpenAiError(status: number, body: string): ErrorDescription {
  let error: { message?: string; code?: string; type?: string } = {};
  try {
    error = (JSON.parse(body) as { error?: typeof error }).error ?? {};
  } catch {}
  const detail = (error.message ?? '').slice(0, 200);
  if (status === 429 && (error.code === 'insufficient_quota' || error.type === 'insufficient_quota')) {
    return {
      code: 'QUOTA_EXCEEDED',
      detail,
      advice: 'The OpenAI account is out of credit; skills_find answers search-only until it is topped up.',
    };
  }
  if (status === 401)
    return {
      code: 'AUTH_REJECTED',
      detail,
      advice: 'OPENAI_API_KEY was refused: renew it and restart the gateway.',
    };
  if (status === 404)
    return { code: 'NOT_FOUND', detail, advice: 'Check SKILLS_AGENT_MODEL and OPENAI_BASE_URL.' };
  return { detail };
}

export interface ChatClientOptions {
  baseUrl: string;
  apiKey: string;
  model: string;
  log: Logger;
  fetch?: typeof fetch;
}

export class ChatClient {
  private readonly http;

  constructor(private readonly options: ChatClientOptions) {
    this.http = createUpstreamHttp({
      service: 'OpenAI',
      log: options.log,
      timeoutMs: 60_000,
      describeError: (status, body) => describeOpenAiError(status, body),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  get model(): string {
    return this.options.model;
  }

  /** One completion turn. Retried like any read: a repeated call costs tokens, changes nothing. */
  async complete(
    messages: ChatMessage[],
    tools: unknown[],
    maxTokens: number,
    signal: AbortSignal,
  ): Promise<{ message: ChatMessage; tokens: number }> {
    const { apiKey } = this.options;
    const response = await this.http.request({
      method: 'POST',
      url: `${this.options.baseUrl}/chat/completions`,
      route: 'POST /chat/completions',
      signal,
      idempotent: true,
      json: {
        model: this.options.model,
        messages,
        tools,
        tool_choice: 'auto',
        max_completion_tokens: maxTokens,
      },
      authorize: async () => `Bearer ${apiKey}`,
      maxResponseBytes: 1024 * 1024,
    });
    const parsed = completion.safeParse(response.json());
    if (!parsed.success) {
      throw new UpstreamError(
        'UPSTREAM_ERROR',
        'OpenAI answered without a usable choice; the candidates are returned in search order.',
      );
    }
    const [choice] = parsed.data.choices;
    const message = choice?.message;
    return {
      message: {
        role: 'assistant',
        content: message?.content ?? null,
        ...(message?.tool_calls?.length ? { tool_calls: message.tool_calls } : {}),
      },
      tokens: parsed.data.usage?.total_tokens ?? 0,
    };
  }
}
