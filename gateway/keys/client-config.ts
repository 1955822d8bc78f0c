/** The client configuration entry of SPEC §4, one per mounted namespace. */
export function mcpServersEntry(baseUrl: string, namespaces: string[], apiKey: string) {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    mcpServers: Object.fromEntries(
      namespaces.map((name) => [
        name,
        { type: 'http', url: `${base}/${name}/mcp`, headers: { 'X-API-Key': apiKey } },
      ]),
    ),
  };
}
