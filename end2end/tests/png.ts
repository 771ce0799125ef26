// Just enough PNG decoding for the tests: the size from the IHDR chunk and the pixel rows
// inflated from the IDAT chunks (with Node's zlib), to tell a drawn plot from a blank image.
import { inflateSync } from "node:zlib";

export interface DecodedPng {
  width: number;
  height: number;
  /** Distinct byte values among the inflated rows (a blank image has very few). */
  distinctBytes: number;
  /** Share of pixel bytes that are not the most frequent value. */
  inkShare: number;
}

export function decodePng(bytes: Buffer): DecodedPng {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (!bytes.subarray(0, 8).equals(signature)) throw new Error("not a PNG: bad signature");
  let offset = 8;
  let width = 0;
  let height = 0;
  const data: Buffer[] = [];
  while (offset < bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString("latin1", offset + 4, offset + 8);
    const body = bytes.subarray(offset + 8, offset + 8 + length);
    if (type === "IHDR") {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
    } else if (type === "IDAT") {
      data.push(body);
    }
    offset += 12 + length;
  }
  const rows = inflateSync(Buffer.concat(data));
  const counts = new Map<number, number>();
  for (const byte of rows) counts.set(byte, (counts.get(byte) ?? 0) + 1);
  const most = Math.max(...counts.values());
  return { width, height, distinctBytes: counts.size, inkShare: 1 - most / rows.length };
}
