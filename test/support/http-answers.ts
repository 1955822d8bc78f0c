/**
 * Reading HTTP/1.1 answers off a raw socket, for tests that pipeline requests: the bytes
 * read so far are split into answers by their content-length.
 */

/** The complete answers' JSON bodies in order, and how many bytes of an unfinished answer follow them. */
export function answersIn<T>(bytes: Buffer): { bodies: T[]; rest: number } {
  const bodies: T[] = [];
  let at = 0;
  for (;;) {
    const end = bytes.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const length = Number(/content-length: *(\d+)/i.exec(bytes.subarray(at, end).toString('latin1'))?.[1]);
    if (!Number.isFinite(length) || bytes.length < end + 4 + length) break;
    bodies.push(JSON.parse(bytes.subarray(end + 4, end + 4 + length).toString('utf8')) as T);
    at = end + 4 + length;
  }
  return { bodies, rest: bytes.length - at };
}
