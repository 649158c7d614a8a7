// `npx tsx bench/m2e/segments/step-bottoms.ts FILE...` (bench only): the rig's recurring steps in
// playout traces (/tmp/tutti-playout-trace-N.json from `main.ts trace`), and what each left. A
// step is a fall of the per-second lowest low point by STEP_FALL quanta or more within two seconds
// (the sender's capture step is 8-9); for each: the level the second before, the lowest low point
// in the step's second and the two after (a render period's dip lands there), and the underruns
// in those seconds. Prints one row per step, then the count dry and within NEAR quanta of empty.

import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';

const STEP_FALL = 5;
const NEAR = 1.5;
/** Seconds at a join's start left out: the start-up floor holds the level up there. */
const FROM_S = 10;

interface Second {
  t: number;
  min: number;
  held: number;
  target: number;
  relief: number;
  underruns: number;
}

const files = process.argv.slice(2);
if (!files.length) {
  console.error('usage: npx tsx bench/m2e/segments/step-bottoms.ts /tmp/tutti-playout-trace-N.json...');
  process.exit(2);
}
const seen = new Set<string>();
const rows: Record<string, unknown>[] = [];
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const hash = createHash('sha1').update(text).digest('hex');
  if (seen.has(hash)) continue; // the same join copied twice
  seen.add(hash);
  const s = (JSON.parse(text) as { perSecond: Second[] }).perSecond;
  for (let i = 2; i < s.length; i++) {
    if (s[i]!.t < FROM_S) continue;
    const before = Math.max(s[i - 1]!.min, s[i - 2]!.min);
    if (!(before - s[i]!.min >= STEP_FALL)) continue;
    const after = s.slice(i, i + 3);
    rows.push({
      file,
      t: s[i]!.t,
      'level before': s[i - 1]!.held,
      'lowest after': Math.min(...after.map((x) => x.min)),
      underruns: after.reduce((n, x) => n + x.underruns, 0),
      target: s[i]!.target,
      'relief after': Math.max(...after.map((x) => x.relief)),
    });
    i += 2; // one step, not three
  }
}
console.table(rows);
const lows = rows.map((r) => r['lowest after'] as number).sort((a, b) => a - b);
const dry = rows.filter((r) => (r.underruns as number) > 0).length;
const near = rows.filter((r) => (r.underruns as number) === 0 && (r['lowest after'] as number) < NEAR).length;
console.log(`${seen.size} joins, ${rows.length} steps: ${dry} ran dry, ${near} more within ${NEAR} quanta of empty; lowest low point after a step, median ${lows.length ? lows[lows.length >> 1] : '–'} quanta`);
