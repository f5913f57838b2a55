import { blobKey } from '../../connectors/blob/contract.ts';
import type { Caller } from '../kernel/access/caller.ts';
import type { AuditTrail } from '../kernel/audit/trail.ts';
import { validation } from '../kernel/errors.ts';
import { kbFor } from './kb/access.ts';
import { readAsset } from './kb/asset-rows.ts';
import type { FileRow, KbFile } from './kb/queries.ts';
import { FILE_COLUMNS, toFile } from './kb/queries.ts';
import type { Services } from '../kernel/services.ts';
import { unstorableText } from '../kernel/text.ts';
import type { Analyzer } from '../search-text/analyzer.ts';
import { analyzer, analyzerLanguage } from '../search-text/analyzer.ts';
import { QUERY_TEXT_MAX_CHARS } from '../search-text/query.ts';
import { SCOPE_PATHS_MAX, searchKbs } from './search.ts';
import { NO_CONTENT } from './searched-content.ts';
import { PASSAGE_MAX_CHARS, charCount, splitPassages } from './context-passages.ts';
import type { Passage } from './context-passages.ts';

/*
 * get_context: the passages of a KB that best answer a question, within a size budget, each
 * citable by path, version and SHA-256. Search picks the candidate files; each is read at its
 * head and cut into passages (by headings and paragraphs); passages are ranked with BM25 over
 * the question's terms among all candidate passages; the best are taken greedily while they fit
 * the budget, and passages of one file that touch are given as one. Everything is ordered with
 * tie-breaks, so the same question over the same versions gives the same package.
 * docs/atmina.md (get_context) has the rules.
 */

/** The budget of a package in characters (code points of passage text): 500 to 64,000, 8,000 by default. */
export const BUDGET_CHARS_MIN = 500;
export const BUDGET_CHARS_MAX = 64_000;
export const BUDGET_CHARS_DEFAULT = 8_000;
/** Passages in a package: 1 to 50, 20 by default (passages merged into one count once). */
export const MAX_PASSAGES_MAX = 50;
export const MAX_PASSAGES_DEFAULT = 20;
/** Candidate files: the best this many of search's answer. */
export const CONTEXT_FILES_MAX = 20;
/** How much of a candidate file is read for passages: its first 256 KiB… */
export const CONTEXT_SCAN_BYTES = 256 * 1024;
/**
 * …and of all candidates together, 1 MiB, the best-ranked first (the files after are not
 * considered): every word read is analysed and scored, so this bounds a package's work whatever
 * the files hold.
 */
export const CONTEXT_SCAN_TOTAL_BYTES = 1024 * 1024;
/** BM25's parameters, as the built-in engine's. */
const K1 = 1.2;
const B = 0.75;
/** Terms search added for a file (typo corrections, prefixes, feedback) weigh this much of a question's own. */
const EXPANSION_WEIGHT = 0.5;
/** Scores are given to this many decimals, so the package reads the same wherever it is computed. */
const SCORE_DECIMALS = 4;

// ---------------------------------------------------------------------------------------------
// Scoring and choosing

/** A candidate file: where it ranked, its text and its passages. */
export interface ContextFile {
  readonly path: string;
  /** Its position in search's answer, 0 the best. */
  readonly rank: number;
  /** Its search score relative to the best candidate's, 0 to 1 (a prior on its passages). */
  readonly prior: number;
  readonly text: string;
  readonly passages: readonly Passage[];
}

export interface ScoredPassage {
  readonly file: ContextFile;
  readonly index: number;
  readonly score: number;
}

/**
 * BM25 of each passage (its text and heading path) over the question's terms, the candidate
 * passages of every file the corpus; `extra` terms weigh EXPANSION_WEIGHT. Multiplied by the
 * file's prior, from one half (the last candidate) to one (the best). Only passages whose own
 * text holds a term of the question are scored (or, when none does, one of the added terms).
 */
export function scorePassages(an: Analyzer, files: readonly ContextFile[], question: string, extra: readonly string[]): ScoredPassage[] {
  const weights = new Map<string, number>();
  for (const term of extra) weights.set(term, EXPANSION_WEIGHT);
  const asked = new Set(an.terms(question));
  for (const term of asked) weights.set(term, 1);
  if (weights.size === 0) return [];
  const docs: { file: ContextFile; index: number; tf: Map<string, number>; length: number; holds: boolean; expanded: boolean }[] = [];
  // Passages under one heading share its path: its terms are found once.
  const headingTerms = new Map<string, string[]>();
  for (const file of files)
    file.passages.forEach((passage, index) => {
      let heading = headingTerms.get(passage.heading);
      if (heading === undefined) {
        heading = an.terms(passage.heading);
        headingTerms.set(passage.heading, heading);
      }
      const own = an.terms(file.text.slice(passage.start, passage.end));
      const tf = new Map<string, number>();
      let holds = false;
      let expanded = false;
      for (const term of own)
        if (weights.has(term)) {
          tf.set(term, (tf.get(term) ?? 0) + 1);
          expanded = true;
          if (asked.has(term)) holds = true;
        }
      // The headings above count for the score, but a passage must hold a term itself to be
      // chosen: otherwise a title's words would bring every section of its file.
      for (const term of heading) if (weights.has(term)) tf.set(term, (tf.get(term) ?? 0) + 1);
      docs.push({ file, index, tf, length: own.length + heading.length, holds, expanded });
    });
  // Search's added terms include those of its feedback, which most prose holds: they qualify a
  // passage only when no passage holds a term of the question itself (a misspelt question).
  const qualifies = docs.some((d) => d.holds) ? (d: (typeof docs)[number]) => d.holds : (d: (typeof docs)[number]) => d.expanded;
  if (docs.length === 0) return [];
  const average = docs.reduce((sum, d) => sum + d.length, 0) / docs.length || 1;
  const holding = new Map<string, number>();
  for (const doc of docs) for (const term of doc.tf.keys()) holding.set(term, (holding.get(term) ?? 0) + 1);
  const idf = new Map([...holding].map(([term, n]) => [term, Math.log(1 + (docs.length - n + 0.5) / (n + 0.5))]));
  return docs.flatMap((doc) => {
    let score = 0;
    for (const [term, tf] of doc.tf)
      score += (weights.get(term) ?? 0) * (idf.get(term) ?? 0) * ((tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * doc.length) / average)));
    return score > 0 && qualifies(doc) ? [{ file: doc.file, index: doc.index, score: score * (0.5 + 0.5 * doc.file.prior) }] : [];
  });
}

/** A passage of the package: consecutive passages of one file as one span. */
export interface ChosenPassage {
  readonly file: ContextFile;
  readonly start: number;
  readonly end: number;
  readonly startLine: number;
  readonly endLine: number;
  readonly heading: string;
  readonly score: number;
  readonly chars: number;
}

export interface Choice {
  readonly passages: readonly ChosenPassage[];
  readonly usedChars: number;
  /** Whether a passage that holds a question's term was left out (budget or passage count). */
  readonly truncated: boolean;
}

/**
 * The best passages while they fit: by score (ties: path, then position), each taken if the
 * package still fits `budget` characters and `maxPassages` passages with it, else passed over
 * for the next. Consecutive passages of a file are one span (the text between them, blank lines,
 * counts too), so nothing is given twice. The package is ordered by file (the best passage's
 * score, then search's rank), then by position.
 */
export function choosePassages(scored: readonly ScoredPassage[], budget: number, maxPassages: number): Choice {
  const order = [...scored].sort(
    (a, b) => b.score - a.score || (a.file.path < b.file.path ? -1 : a.file.path > b.file.path ? 1 : 0) || a.file.rank - b.file.rank || a.index - b.index,
  );
  const chosen = new Map<ContextFile, Map<number, number>>();
  const size = (file: ContextFile, index: number): number => {
    const p = file.passages[index];
    return p === undefined ? 0 : charCount(file.text.slice(p.start, p.end));
  };
  const gap = (file: ContextFile, index: number): number => {
    const a = file.passages[index];
    const b = file.passages[index + 1];
    return a === undefined || b === undefined ? 0 : charCount(file.text.slice(a.end, b.start));
  };
  let used = 0;
  let spans = 0;
  let truncated = false;
  for (const candidate of order) {
    const picked = chosen.get(candidate.file) ?? new Map<number, number>();
    const before = picked.has(candidate.index - 1);
    const after = picked.has(candidate.index + 1);
    const cost =
      size(candidate.file, candidate.index) + (before ? gap(candidate.file, candidate.index - 1) : 0) + (after ? gap(candidate.file, candidate.index) : 0);
    const count = spans + (before || after ? (before && after ? -1 : 0) : 1);
    if (used + cost > budget || count > maxPassages) {
      truncated = true;
      continue;
    }
    picked.set(candidate.index, candidate.score);
    chosen.set(candidate.file, picked);
    used += cost;
    spans = count;
  }
  const out: ChosenPassage[] = [];
  for (const [file, picked] of chosen) {
    const indexes = [...picked.keys()].sort((a, b) => a - b);
    let run: number[] = [];
    const emit = (): void => {
      const first = file.passages[run[0] ?? -1];
      const last = file.passages[run[run.length - 1] ?? -1];
      if (first === undefined || last === undefined) return;
      out.push({
        file,
        start: first.start,
        end: last.end,
        startLine: first.startLine,
        endLine: last.endLine,
        heading: first.heading,
        score: Math.max(...run.map((i) => picked.get(i) ?? 0)),
        chars: charCount(file.text.slice(first.start, last.end)),
      });
    };
    for (const index of indexes) {
      if (run.length > 0 && index !== (run[run.length - 1] ?? 0) + 1) {
        emit();
        run = [];
      }
      run.push(index);
    }
    emit();
  }
  const best = new Map<ContextFile, number>();
  for (const p of out) best.set(p.file, Math.max(best.get(p.file) ?? 0, p.score));
  out.sort((a, b) => (best.get(b.file) ?? 0) - (best.get(a.file) ?? 0) || a.file.rank - b.file.rank || a.start - b.start);
  return { passages: out, usedChars: used, truncated };
}

// ---------------------------------------------------------------------------------------------
// The package

export interface ContextInput {
  readonly kbId: string;
  readonly question: string;
  readonly pathPrefixes?: readonly string[];
  readonly budgetChars?: number;
  readonly maxPassages?: number;
}

export interface ContextPassage {
  readonly path: string;
  readonly fileId: string;
  readonly version: number;
  readonly sha256: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly heading: string;
  readonly text: string;
  readonly score: number;
}

export interface ContextPackage {
  readonly kbId: string;
  readonly question: string;
  readonly budgetChars: number;
  readonly usedChars: number;
  readonly passages: readonly ContextPassage[];
  readonly filesConsidered: number;
  readonly truncated: boolean;
}

// Bytes that are not UTF-8 become U+FFFD, as search reads them; a read cut inside a character leaves one at the end.
const UTF8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });

/** The first `maxBytes` of a file's head as text (an Asset's Companion text, its first `maxBytes` UTF-16 units). */
async function headText(services: Services, tenantId: string, file: KbFile, maxBytes: number): Promise<string> {
  if (file.kind === 'asset') return ((await readAsset(services.db, tenantId, file.id, file.version))?.companion ?? '').slice(0, maxBytes);
  if (file.sizeBytes === 0 || maxBytes <= 0) return '';
  const chunks: Buffer[] = [];
  const cut = file.sizeBytes > maxBytes;
  for await (const chunk of await services.blob.get(blobKey(file.sha256), { start: 0, end: Math.min(file.sizeBytes, maxBytes) - 1 }))
    chunks.push(chunk as Buffer);
  const text = UTF8.decode(Buffer.concat(chunks));
  return cut ? text.replace(/\ufffd+$/, '') : text;
}

function checkInteger(field: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) throw validation(`${field} must be a whole number from ${min} to ${max}`);
}

const isMarkdown = (file: KbFile): boolean => file.kind === 'asset' || file.mediaType === 'text/markdown' || /\.(?:md|markdown)$/i.test(file.path);

/** get_context (Viewer): the package for a question over one KB. */
export async function contextPackage(services: Services, caller: Caller, input: ContextInput, audit: AuditTrail): Promise<ContextPackage> {
  const bad = unstorableText(input.question);
  if (bad !== undefined) throw validation(`question ${bad}`);
  if (input.question.length > QUERY_TEXT_MAX_CHARS) throw validation(`question is longer than ${QUERY_TEXT_MAX_CHARS} characters`);
  if (input.question.trim() === '') throw validation('question must not be empty');
  const budget = input.budgetChars ?? BUDGET_CHARS_DEFAULT;
  checkInteger('budget_chars', budget, BUDGET_CHARS_MIN, BUDGET_CHARS_MAX);
  const maxPassages = input.maxPassages ?? MAX_PASSAGES_DEFAULT;
  checkInteger('max_passages', maxPassages, 1, MAX_PASSAGES_MAX);
  if ((input.pathPrefixes?.length ?? 0) > SCOPE_PATHS_MAX) throw validation(`path_prefixes may name at most ${SCOPE_PATHS_MAX} prefixes`);
  const kb = await kbFor(services.db, caller, input.kbId, 'viewer', 'getting context');
  // One KB's files only: no other product's content is searched.
  const page = await searchKbs(services, NO_CONTENT, caller, {
    query: input.question,
    kbIds: [kb.kb.id],
    ...(input.pathPrefixes === undefined ? {} : { pathPrefixes: input.pathPrefixes }),
    maxFiles: CONTEXT_FILES_MAX,
  });
  const ids = page.hits.map((h) => String(h.ref.file_id ?? ''));
  // The heads as they are now: a file deleted since it was indexed is left out, a moved one has its new path.
  const rows =
    ids.length === 0
      ? []
      : await services.db.query<FileRow>(
          `SELECT ${FILE_COLUMNS} FROM kb_files f WHERE f.tenant_id = $1 AND f.kb_id = $2 AND f.id = ANY($3::uuid[]) AND f.deleted_at IS NULL`,
          [caller.tenant.id, kb.kb.id, ids.filter((id) => /^[0-9a-f-]{36}$/i.test(id))],
        );
  const heads = new Map(rows.map((row) => [row.id, toFile(row)]));
  const prefixes = input.pathPrefixes ?? [];
  const bestScore = Math.max(0, ...page.hits.map((h) => h.score));
  const an = analyzer(analyzerLanguage(caller.tenant.language));
  const maxChars = Math.min(PASSAGE_MAX_CHARS, budget);
  const files: ContextFile[] = [];
  const heldBy = new Map<ContextFile, KbFile>();
  let scanLeft = CONTEXT_SCAN_TOTAL_BYTES;
  for (const [rank, hit] of page.hits.entries()) {
    const head = heads.get(String(hit.ref.file_id));
    if (head === undefined || (prefixes.length > 0 && !prefixes.some((p) => head.path.startsWith(p)))) continue;
    if (scanLeft <= 0) break;
    const scan = Math.min(CONTEXT_SCAN_BYTES, scanLeft);
    const text = (await headText(services, caller.tenant.id, head, scan)).toWellFormed();
    scanLeft -= head.kind === 'asset' ? text.length : Math.min(head.sizeBytes, scan);
    const file: ContextFile = {
      path: head.path,
      rank,
      prior: bestScore > 0 ? Math.max(0, hit.score) / bestScore : 1,
      text,
      passages: splitPassages(text, { markdown: isMarkdown(head), maxChars }),
    };
    files.push(file);
    heldBy.set(file, head);
  }
  const expansions = [...new Set(page.hits.flatMap((h) => h.reasons.expansions))].sort();
  const choice = choosePassages(scorePassages(an, files, input.question, expansions), budget, maxPassages);
  const passages = choice.passages.flatMap((p): ContextPassage[] => {
    const head = heldBy.get(p.file);
    if (head === undefined) return [];
    return [
      {
        path: head.path,
        fileId: head.id,
        version: head.version,
        sha256: head.sha256,
        startLine: p.startLine,
        endLine: p.endLine,
        heading: p.heading,
        text: p.file.text.slice(p.start, p.end),
        score: Number(p.score.toFixed(SCORE_DECIMALS)),
      },
    ];
  });
  const touched = new Map(passages.map((p) => [p.fileId, p.version]));
  // The event names the KB, so its team's audit_query_text setting decides whether the question is shown.
  audit.readAs('kb.context');
  audit.detail({ query: input.question, passages: passages.length, files: files.length });
  audit.touch({ type: 'kb', id: kb.kb.id }, ...[...touched].map(([id, version]) => ({ type: 'kb_file', id, version })));
  return {
    kbId: kb.kb.id,
    question: input.question,
    budgetChars: budget,
    usedChars: choice.usedChars,
    passages,
    filesConsidered: files.length,
    truncated: choice.truncated,
  };
}
