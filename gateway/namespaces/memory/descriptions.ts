export const MEMORY_INSTRUCTIONS = `Long-term memory for this API key. Every memory belongs to the key you call with; no other key can read, change or count it.
Search before you write (memory_search), so you update a memory instead of storing a near-copy. Use \`key\` in memory_write for facts that change (it upserts), \`namespace\` to keep projects apart, tags to group, pinned for what must never be evicted, and ttl_seconds for what should expire.
New memories are keyword-searchable at once and semantically searchable when embedding_status turns "ready".`;
