// Flips one byte of a file stored (uncompressed) in a zip, in place, and rewrites its CRC-32 in
// the local header and the central directory, so that the archive stays readable and only the
// content changes: the tampering the evidence validator must name.
const TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

export function flipStoredByte(zip: Buffer, name: string): Buffer {
  const out = Buffer.from(zip);
  const wanted = Buffer.from(name);
  let local = -1;
  for (let at = 0; at + 30 < out.length; at++) {
    if (out.readUInt32LE(at) !== 0x04034b50) continue;
    const nameLength = out.readUInt16LE(at + 26);
    if (out.subarray(at + 30, at + 30 + nameLength).equals(wanted)) {
      local = at;
      break;
    }
  }
  if (local < 0) throw new Error(`${name} not in the zip`);
  if (out.readUInt16LE(local + 8) !== 0) throw new Error(`${name} is compressed, not stored`);
  const size = out.readUInt32LE(local + 18);
  const start = local + 30 + out.readUInt16LE(local + 26) + out.readUInt16LE(local + 28);
  out[start + Math.floor(size / 2)] ^= 0x01;
  const crc = crc32(out.subarray(start, start + size));
  out.writeUInt32LE(crc, local + 14);
  for (let at = 0; at + 46 < out.length; at++) {
    if (out.readUInt32LE(at) !== 0x02014b50) continue;
    const nameLength = out.readUInt16LE(at + 28);
    if (out.subarray(at + 46, at + 46 + nameLength).equals(wanted)) out.writeUInt32LE(crc, at + 16);
  }
  return out;
}
