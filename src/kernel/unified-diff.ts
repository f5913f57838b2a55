/**
 * A line-based unified diff (as `diff -u` prints it) for reviewers comparing a draft with the
 * version it was written on. Myers' O(ND) algorithm after trimming the common ends; past
 * MAX_EDITS differing lines it gives up on alignment and shows the middle as replaced.
 */

const MAX_EDITS = 1000;
const NO_NEWLINE = '\n\\ No newline at end of file';

type Op = { readonly kind: ' ' | '-' | '+'; readonly line: string };

/** The lines of a text; a last line without a newline carries the "\ No newline" marker. */
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else lines[lines.length - 1] += NO_NEWLINE;
  return lines;
}

/** The shortest edit script of a into b (both without common ends), or a plain replacement. */
function middle(a: readonly string[], b: readonly string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const replaced = (): Op[] => [...a.map((line) => ({ kind: '-' as const, line })), ...b.map((line) => ({ kind: '+' as const, line }))];
  if (n === 0 || m === 0) return replaced();
  const max = Math.min(n + m, MAX_EDITS);
  // v[k + offset] is the furthest x reached on diagonal k; trace[d] the band -d-1..d+1 before step d.
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && (v[offset + k - 1] ?? 0) < (v[offset + k + 1] ?? 0)) ? (v[offset + k + 1] ?? 0) : (v[offset + k - 1] ?? 0) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace, n, m);
    }
  }
  return replaced();
}

function backtrack(a: readonly string[], b: readonly string[], trace: readonly Int32Array[], n: number, m: number): Op[] {
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const band = trace[d] as Int32Array;
    const at = (k: number): number => band[k + d + 1] ?? 0;
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : at(prevK);
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ kind: ' ', line: a[x - 1] as string });
      x--;
      y--;
    }
    if (d > 0) {
      if (x === prevX) ops.push({ kind: '+', line: b[y - 1] as string });
      else ops.push({ kind: '-', line: a[x - 1] as string });
    }
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}

function diffLines(a: readonly string[], b: readonly string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const same = (lines: readonly string[]): Op[] => lines.map((line) => ({ kind: ' ', line }));
  return [...same(a.slice(0, start)), ...middle(a.slice(start, endA), b.slice(start, endB)), ...same(a.slice(endA))];
}

/** `start,length` of a hunk side, as diff writes it (`,1` left out; an empty side names the line before). */
function range(start: number, length: number): string {
  if (length === 0) return `${start},0`;
  return length === 1 ? `${start + 1}` : `${start + 1},${length}`;
}

/** The unified diff of two texts with `context` lines around each change; '' when they are equal. */
export function unifiedDiff(from: string, to: string, labels: { from: string; to: string }, context = 3): string {
  if (from === to) return '';
  const ops = diffLines(splitLines(from), splitLines(to));
  // Position of each op in a and b (0-based, before the op).
  const posA: number[] = [];
  const posB: number[] = [];
  let ia = 0;
  let ib = 0;
  for (const op of ops) {
    posA.push(ia);
    posB.push(ib);
    if (op.kind !== '+') ia++;
    if (op.kind !== '-') ib++;
  }
  const out = [`--- ${labels.from}`, `+++ ${labels.to}`];
  let i = 0;
  while (i < ops.length) {
    while (i < ops.length && ops[i]?.kind === ' ') i++;
    if (i >= ops.length) break;
    const start = Math.max(0, i - context);
    // Extend over changes closer than two contexts apart.
    let end = i;
    let lastChange = i;
    while (end < ops.length && end - lastChange <= 2 * context) {
      if (ops[end]?.kind !== ' ') lastChange = end;
      end++;
    }
    end = Math.min(ops.length, lastChange + context + 1);
    const hunk = ops.slice(start, end);
    const lengthA = hunk.filter((op) => op.kind !== '+').length;
    const lengthB = hunk.filter((op) => op.kind !== '-').length;
    out.push(`@@ -${range(posA[start] ?? 0, lengthA)} +${range(posB[start] ?? 0, lengthB)} @@`);
    for (const op of hunk) out.push(`${op.kind}${op.line}`);
    i = end;
  }
  return `${out.join('\n')}\n`;
}
