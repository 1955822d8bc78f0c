export function satisfiesEngines(version: string, range: string): boolean;
export function supportedNodeMessage(version: string, range: string): string;
export function launch(entry: string): Promise<void>;
