export function satisfiesEngines(version: string, range: string): boolean;
export function supportedNodeMessage(version: string, range: string): string;
export function checkServerArguments(args: string[], usage: string): void;
export function launch(entry: string, serverUsage?: string): Promise<void>;
