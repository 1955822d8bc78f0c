/**
 * A capabilities answer's JSON and its quoted copy (the 2025 era sends the output twice: as
 * `structuredContent` and quoted as the text content). The tool catalogue and the error codes
 * are the same on every call and over half of the text, so their JSON and its escaped copy
 * are made once, when the namespace is first asked, and spliced in; the rest (readiness,
 * settings, problems, details) changes between calls and is JSON.stringify's. It replaced a
 * one-walk writer that remembered strings, which lost on outputs whose strings vary (decision
 * 0902 has the figures).
 */
import type { OutputJson } from './tool.ts';

/** JSON.stringify(json) without its quotes: a JSON text's copy as the inside of a JSON string. */
const escapedOf = (json: string) => JSON.stringify(json).slice(1, -1);

/** The fixed arrays, kept by identity, with both encodings of each piece around them. */
export interface FixedJson {
  tools: readonly unknown[];
  errorCodes: readonly unknown[];
  /** `,"tools":[…],"error_codes":[…],"details":` and the same escaped. */
  json: string;
  escaped: string;
}

export function fixedJson(tools: readonly unknown[], errorCodes: readonly unknown[]): FixedJson {
  const json = `,"tools":${JSON.stringify(tools)},"error_codes":${JSON.stringify(errorCodes)},"details":`;
  // Flat copies: kept strings spliced into every answer must not be ropes walked again each time.
  return {
    tools,
    errorCodes,
    json: Buffer.from(json).toString(),
    escaped: Buffer.from(escapedOf(json)).toString(),
  };
}

interface CapabilitiesShape {
  tools: readonly unknown[];
  error_codes: readonly unknown[];
  details: Record<string, unknown>;
}

/**
 * The bytes JSON.stringify(output) and JSON.stringify of that text write. The splice holds
 * while the output's keys end with tools, error_codes, details in that order and the arrays
 * are the fixed ones; otherwise (a handler changed) both are JSON.stringify's. Escaping works
 * character by character and every piece joined is whole JSON (JSON.stringify has already
 * escaped any lone surrogate), so the escaped pieces joined are the escaped whole.
 */
export function capabilitiesJson<T extends CapabilitiesShape>(output: T, fixed: FixedJson): OutputJson {
  const { tools, error_codes, details, ...head } = output;
  const keys = Object.keys(output);
  const tail = keys.slice(-3).join();
  const headJson = JSON.stringify(head);
  if (
    tools !== fixed.tools ||
    error_codes !== fixed.errorCodes ||
    tail !== 'tools,error_codes,details' ||
    headJson === '{}' ||
    details === undefined
  ) {
    const json = JSON.stringify(output);
    return { json, quoted: JSON.stringify(json) };
  }
  const open = headJson.slice(0, -1);
  const detailsJson = JSON.stringify(details);
  return {
    json: `${open}${fixed.json}${detailsJson}}`,
    quoted: `"${escapedOf(open)}${fixed.escaped}${escapedOf(detailsJson)}}"`,
  };
}
