// Node, run by hand (`npx tsx scripts/make-icons.ts`): rasterises public/icon.svg's design into the
// PNG app icons the web manifest lists (192 and 512 "any", 512 "maskable"), with signed-distance
// anti-aliasing and a hand-written PNG encoder (zlib), so no image tool is needed. The PNGs are
// committed; rerun only when the design changes.

import { writeFileSync } from 'node:fs';
import { crc32, deflateSync } from 'node:zlib';

type RGB = readonly [number, number, number];
const BG: RGB = [0x1d, 0x27, 0x33];
const WAVE: RGB = [0x4f, 0xd1, 0xa5];

/** The wave of icon.svg in its 64-unit viewBox: M14 40 c6-14 12-14 18 0 s12 14 18 0, as points. */
function wavePoints(): Array<[number, number]> {
  const beziers: Array<[number, number][]> = [
    [[14, 40], [20, 26], [26, 26], [32, 40]],
    [[32, 40], [38, 54], [44, 54], [50, 40]],
  ];
  const pts: Array<[number, number]> = [];
  for (const [p0, p1, p2, p3] of beziers as Array<[[number, number], [number, number], [number, number], [number, number]]>) {
    for (let i = 0; i <= 64; i++) {
      const t = i / 64;
      const u = 1 - t;
      const a = u * u * u, b = 3 * u * u * t, c = 3 * u * t * t, d = t * t * t;
      pts.push([a * p0[0] + b * p1[0] + c * p2[0] + d * p3[0], a * p0[1] + b * p1[1] + c * p2[1] + d * p3[1]]);
    }
  }
  return pts;
}

function distToPolyline(x: number, y: number, pts: Array<[number, number]>): number {
  let best = Infinity;
  for (let i = 1; i < pts.length; i++) {
    const [ax, ay] = pts[i - 1]!;
    const [bx, by] = pts[i]!;
    const dx = bx - ax, dy = by - ay;
    const len2 = dx * dx + dy * dy;
    const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / len2));
    const ex = x - (ax + t * dx), ey = y - (ay + t * dy);
    best = Math.min(best, ex * ex + ey * ey);
  }
  return Math.sqrt(best);
}

/** Signed distance to a square of side 64 at the origin with corner radius r (negative inside). */
function roundedSquare(x: number, y: number, r: number): number {
  const qx = Math.abs(x - 32) - (32 - r);
  const qy = Math.abs(y - 32) - (32 - r);
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r;
}

/**
 * RGBA pixels of the icon. `maskable`: full-bleed background (the platform applies its own mask)
 * and the wave centred and scaled into the 80 % safe zone.
 */
function render(size: number, maskable: boolean): Buffer {
  const px = Buffer.alloc(size * size * 4);
  const unit = 64 / size; // viewBox units per pixel
  const pts = wavePoints();
  const scale = maskable ? 0.8 : 1;
  const shiftY = maskable ? -8 : 0; // the wave's band is centred on y = 40
  for (let j = 0; j < size; j++) {
    for (let i = 0; i < size; i++) {
      const x = (i + 0.5) * unit;
      const y = (j + 0.5) * unit;
      const bg = maskable ? 1 : clamp01(0.5 - roundedSquare(x, y, 12) / unit);
      // Map the pixel back into the wave's own coordinates.
      const wx = 32 + (x - 32) / scale;
      const wy = 32 + (y - 32) / scale - shiftY;
      const w = clamp01(0.5 - (distToPolyline(wx, wy, pts) - 2.5) * scale / unit);
      const o = (j * size + i) * 4;
      for (let k = 0; k < 3; k++) px[o + k] = Math.round(BG[k]! * (1 - w) + WAVE[k]! * w);
      px[o + 3] = Math.round(255 * bg);
    }
  }
  return px;
}

function clamp01(v: number): number {
  return v < 0 ? 0 : v > 1 ? 1 : v;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** An 8-bit RGBA PNG (colour type 6), filter 0 on every row. */
export function encodePng(width: number, height: number, rgba: Buffer): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) rgba.copy(raw, y * (width * 4 + 1) + 1, y * width * 4, (y + 1) * width * 4);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const out = new URL('../public/', import.meta.url);
for (const [name, size, maskable] of [
  ['icon-192.png', 192, false],
  ['icon-512.png', 512, false],
  ['icon-maskable-512.png', 512, true],
  ['apple-touch-icon.png', 180, true],
] as const) {
  writeFileSync(new URL(name, out), encodePng(size, size, render(size, maskable)));
  console.log(`public/${name} ${size}×${size}${maskable ? ' maskable' : ''}`);
}
