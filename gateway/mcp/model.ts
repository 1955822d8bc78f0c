/**
 * The era-neutral model: what a namespace is, as its author writes it, and what a tool call
 * yields. Types only, below both the compiler (namespace.ts, call-tool.ts) and the wire
 * encoders (wire/), so each of them reads the model without reading the others.
 */
import type { ToolDefinition } from './tool.ts';

export interface NamespaceDefinition {
  /** URL segment: served at /{name}/mcp. */
  name: string;
  title: string;
  version: string;
  instructions: string;
  tools: ToolDefinition[];
  /** Releases what the namespace holds (stores, pools); called once when the gateway stops. */
  close?(): Promise<void>;
}

/** One tools/list entry, the same in every protocol era, serialized once. */
export interface ListedTool {
  name: string;
  json: string;
}

/**
 * The era-neutral model of a namespace: what it is, its tools and their listed form. Both
 * wire encoders are built from this one description, so a namespace written once as a
 * NamespaceDefinition speaks every protocol era without code of its own.
 */
export interface NamespaceModel {
  definition: NamespaceDefinition;
  tools: Map<string, ToolDefinition>;
  /** In definition order, which is the order tools/list answers in. */
  listed: ListedTool[];
  serverInfo: { name: string; title: string; version: string };
}

/** A CallToolResult without era-specific fields; `text` is the structured output as JSON, or the error. */
export type ToolResult =
  /** `quoted`, when given, is JSON.stringify(text), made by a tool that had most of it escaped already. */
  | { isError: false; text: string; structured: unknown; quoted?: string }
  /** `code` is the ToolError's stable code (quota_exceeded, …), for metrics and the audit trail. */
  | { isError: true; text: string; code?: string };
