/**
 * Memory rows put straight into a Postgres memory store's tables by the server (thousands
 * in a statement), for tests that need a key of some size; and one-shot statements on a
 * connection of the test's own.
 */
import pg from 'pg';

export async function pgRows<T = Record<string, unknown>>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** `n` current memories of `key` in `namespace`, each with a random vector of `dims`. */
export async function seedKeyRows(
  url: string,
  key: string,
  n: number,
  dims: number,
  namespace = 'default',
): Promise<void> {
  const [first] = await pgRows<{ id: string | null }>(url, 'SELECT max(id) AS id FROM memories');
  await pgRows(
    url,
    `INSERT INTO memories (public_id, api_key_id, namespace, content, content_hash, embedding_status, created_at, updated_at, occurred_at)
     SELECT gen_random_uuid(), $1, $3, $1 || ' note ' || g, md5($1 || $3 || g), 'ready', g, g, g
       FROM generate_series(1, $2::int) g`,
    [key, n, namespace],
  );
  await pgRows(
    url,
    `INSERT INTO memory_vectors (memory_id, api_key_id, embedding)
     SELECT m.id, m.api_key_id, (SELECT array_agg(random()::float4 - 0.5 + m.id * 0 ORDER BY i)
                                   FROM generate_series(1, ${Number(dims)}) i)::vector
       FROM memories m WHERE m.api_key_id = $1 AND m.id > $2`,
    [key, first?.id ?? 0],
  );
}
