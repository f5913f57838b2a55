import type { Mark, NodeType, RelationVerb } from '../brain/index.ts';
import { ABOVE_TIER, EMPTY_BRAIN, MARK_PHRASES, METADATA_KEYS, NODE_TYPES, RELATION_VERBS, UNKNOWN_NODE, WARNING_SIGN } from '../brain/index.ts';
import { createHash } from 'node:crypto';
import type { Tier } from '../kernel/directory/tiers.ts';
import { TIERS } from '../kernel/directory/tiers.ts';
import { isKgwError } from '../kernel/errors.ts';
import { characters } from '../kernel/org/rules.ts';
import { unsafeName, unstorableText } from '../kernel/text.ts';
import type { DialectOutcome, DialectReader, McpImportContext, Refusal } from './import-mcp-dialect.ts';
import { ItemRefused, isRecord } from './kb-import.ts';
import { SourceError } from './mcp-source.ts';
import { visible } from './terminal.ts';

/**
 * kgw import mcp --dialect brain: the Company Brain a token may read at another endpoint, read
 * through the three reading tools the contract names (../shared/spec/company-brain-mcp.md) and
 * written here with `brain.import`, the planner of `kgw brain import`:
 *
 * 1. get_skill_pack once: the source's count of visible nodes per type, the count of nodes above
 *    the token's tier (`[hidden:N]`), and the node ids it cites.
 * 2. A query_index sweep: ranked search has no paging and answers at most 20 hits, so the sweep
 *    asks for word prefixes (`ab* ac* …`, this gateway's query syntax), splits a prefix whose
 *    answer was full into longer ones, and asks the words of the titles it has read; it stops
 *    once every type the skill pack counted is reached, when its questions run out, or at its
 *    bounds.
 * 3. read_concept for every visible node id, whatever named it (the pack, a hit, a relation).
 *
 * Answers are text; only what the contract fixes is relied on (ids in brackets, type labels,
 * verbs, access literals, mark phrases, metadata keys, freshness instants, `[hidden:N]`, the
 * verbatim refusals). Summaries and tags are display text under display headings: they are
 * told apart by their place in the answer (see `sections`), and copied as written.
 *
 * The source is not trusted: every id, title and value is checked against what this gateway's
 * brain file holds before it goes into the file, and refused one by one with the reason; the
 * planner stays the judge, and what it still refuses is mapped back to its item by line.
 */

/** Node ids found at most (every visible node, the directory's too): a source whose answers never end stops there. */
export const SOURCE_NODES_MAX = 100_000;
/** query_index calls of one sweep at most: a large brain is reached long before, an endless one stops. */
export const SWEEP_QUERIES_MAX = 10_000;

// The contract's stable vocabulary and verbatim answers (company-brain-mcp.md, "The machine
// contract"), as this gateway's Company Brain speaks them.
const MARK_PHRASE_LIST = Object.entries(MARK_PHRASES) as [Mark, string][];
/** An empty brain's answer: its first sentence (what follows may be worded otherwise). */
const EMPTY_BRAIN_START = EMPTY_BRAIN.slice(0, EMPTY_BRAIN.indexOf('.') + 1);
/** query_index's limit range tops out at 20 (the contract's input bounds); read_concept's id at 300 characters. */
const QUERY_LIMIT = 20;
const SOURCE_ID_MAX_CHARS = 300;

/*
 * What this gateway's brain file holds (src/brain/model.ts BRAIN_BOUNDS and NODE_ID,
 * docs/company-brain.md "Bounds"; the composition root cannot import them from behind the
 * product's index). They are checked here first so that each item is refused with its own
 * reason instead of the whole file; the planner checks everything again, and a refusal of its
 * own is mapped back to its item, so a bound that moves there is still obeyed.
 */
const LOCAL = { titleChars: 200, summaryChars: 4000, tags: 20, tagChars: 60, metadataValueChars: 500, importBytes: 16 * 1024 * 1024 } as const;
const LOCAL_NODE_ID = /^[a-z0-9][a-z0-9._-]{0,79}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The sweep's prefixes: two characters of these at first, one more where an answer was full, up to PREFIX_MAX_CHARS. */
const PREFIX_ALPHABET = [...'abcdefghijklmnopqrstuvwxyz0123456789'];
/** This gateway's search reads at most 4 prefixes per query (docs/search.md), so a question asks 4 at once. */
const PREFIXES_PER_QUERY = 4;
const PREFIX_MAX_CHARS = 6;
/** read_concept calls in flight at once. */
const READ_CONCURRENCY = 6;
/** Rounds of the planner refusing items before the file is given up (each round drops at least one item). */
const PLAN_ROUNDS_MAX = 8;

/*
 * The directory (the organisation, people, agents, departments, projects) is this gateway's
 * own, from its org file; a source names its directory nodes `org` and `person:`, `agent:`,
 * `department:`, `project:` ids. They are read for their relations and never copied as nodes.
 */

/** Whether an id with its type (when known) is one of the source's directory nodes: the prefix names the type. */
function isDirectory(id: string, type: string | undefined): boolean {
  if (id === 'org') return type === undefined || type === 'organization';
  const prefix = /^(person|agent|department|project):./s.exec(id)?.[1];
  return prefix !== undefined && (type === undefined || type === prefix);
}

/**
 * The relations the directory itself draws (src/brain/org-graph.ts): a department or project is
 * part of the organisation, a person or agent belongs to a department and works on a project, a
 * person owns an agent. The org file keeps them here; they are not copied.
 */
function isDirectoryRelation(from: string, verb: string, to: string): boolean {
  const kind = (id: string) => (id === 'org' ? 'org' : (/^(person|agent|department|project):/.exec(id)?.[1] ?? 'brain'));
  const [a, b] = [kind(from), kind(to)];
  if (verb === 'is part of') return (a === 'department' || a === 'project') && b === 'org';
  if (verb === 'belongs to') return (a === 'person' || a === 'agent') && b === 'department';
  if (verb === 'works on') return (a === 'person' || a === 'agent') && b === 'project';
  return verb === 'owns' && a === 'person' && b === 'agent';
}

/** Why a source's id cannot even be asked about, or undefined. */
function badSourceId(id: string): string | undefined {
  const unstorable = unstorableText(id) ?? unsafeName(id);
  if (unstorable !== undefined) return `its id ${unstorable}`;
  if (id.trim() === '') return 'its id is blank';
  if (characters(id) > SOURCE_ID_MAX_CHARS) return `its id is longer than ${SOURCE_ID_MAX_CHARS} characters`;
  return undefined;
}

/**
 * The local id of a brain node: the source's own where the brain file can hold it, so a second
 * run updates what the first created; otherwise a slug of it with a hash of the whole id
 * (`Month End` → `month-end-<12 hex>`), the same on every run.
 */
export function localNodeId(sourceId: string): string {
  if (LOCAL_NODE_ID.test(sourceId) && sourceId !== 'org') return sourceId;
  const slug = sourceId
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 60)
    .replace(/[-._]+$/, '');
  return `${slug === '' ? 'node' : slug}-${createHash('sha256').update(sourceId, 'utf8').digest('hex').slice(0, 12)}`;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const TYPE_ALTERNATIVES = NODE_TYPES.map(escapeRegExp).join('|');
const VERB_ALTERNATIVES = RELATION_VERBS.map(escapeRegExp).join('|');
const isNodeType = (value: string): value is NodeType => (NODE_TYPES as readonly string[]).includes(value);
const isTier = (value: string): value is Tier => (TIERS as readonly string[]).includes(value);
const markOf = (text: string): Mark | null => MARK_PHRASE_LIST.find(([, phrase]) => text.includes(phrase))?.[0] ?? null;

// ---------------------------------------------------------------------------------------------
// The answers, read

/** A node as read_concept gave it. */
interface Concept {
  readonly id: string;
  readonly type: NodeType;
  readonly title: string;
  readonly access: Tier;
  readonly mark: Mark | null;
  readonly summary: string;
  readonly metadata: readonly (readonly [string, string])[];
  readonly tags: readonly string[];
  readonly verified: string | undefined;
  readonly reviewBy: string | undefined;
  readonly relations: readonly SeenRelation[];
  /** Relations to nodes above the token's tier, only counted. */
  readonly hiddenRelations: number;
  /** Relation lines that could not be read, as given. */
  readonly unreadable: readonly string[];
}

interface SeenRelation {
  readonly from: string;
  readonly verb: RelationVerb;
  readonly to: string;
  readonly mark: Mark | null;
  /** The other end as the line cites it. */
  readonly other: { readonly id: string; readonly type: NodeType; readonly title: string };
}

/** Display headings this gateway writes (src/brain/dialect/texts.ts, English and German): a hint where the place alone cannot tell. */
const KNOWN_HEADINGS = { summary: ['Summary', 'Zusammenfassung'], tags: ['Tags', 'Schlagwörter'] } as const;

/** The headings one source uses, learnt from answers whose shape told them apart. */
class Headings {
  readonly summary = new Set<string>(KNOWN_HEADINGS.summary);
  readonly tags = new Set<string>(KNOWN_HEADINGS.tags);
}

interface Section {
  readonly heading: string;
  readonly lines: readonly string[];
}

const METADATA_LINE = new RegExp(`^- (${METADATA_KEYS.map(escapeRegExp).join('|')}): (.*)$`, 'su');
const FRESHNESS_LINE = /^- (Evidence status|Verified|Review by): (.*)$/su;
const isMetadata = (section: Section | undefined): boolean =>
  section !== undefined && section.lines.length > 0 && section.lines.every((l) => METADATA_LINE.test(l));

/**
 * A concept's sections after its header, in the order the answer gives them: summary, metadata,
 * tags, freshness, relations (each but the last may be missing). Headings are display text, and a
 * summary may itself hold a line starting with `## `, so they are taken from the end, by shape:
 * relations last, freshness and metadata by their contract keys, tags as the one line after
 * metadata or under a heading known as the tags'; whatever comes before is the summary, whole.
 */
function sections(
  body: readonly string[],
  headings: Headings,
): { summary: string; metadata?: Section; tags?: Section; freshness?: Section; relations: Section } | string {
  const starts: number[] = [];
  body.forEach((line, i) => {
    if (line.startsWith('## ') && i > 0 && body[i - 1] === '') starts.push(i);
  });
  if (starts.length === 0 || body.slice(0, starts[0]).some((line) => line !== '')) return 'the source’s answer does not have the sections of read_concept';
  const list: Section[] = starts.map((start, k) => ({
    heading: body[start]!.slice(3),
    lines: body.slice(start + 1, k + 1 < starts.length ? starts[k + 1]! - 1 : body.length),
  }));
  const relations = list.pop()!;
  const last = (test: (s: Section) => boolean): Section | undefined => (list.length > 0 && test(list.at(-1)!) ? list.pop() : undefined);
  const freshness = last((s) => s.lines.length > 0 && s.lines.every((l) => FRESHNESS_LINE.test(l)));
  const tags = last(
    (s) => s.lines.length === 1 && !headings.summary.has(s.heading) && (headings.tags.has(s.heading) || isMetadata(list.at(-2))) && s.lines[0] !== '',
  );
  if (tags !== undefined) headings.tags.add(tags.heading);
  const metadata = last(isMetadata);
  if (metadata !== undefined && list.length > 0) headings.summary.add(list[0]!.heading);
  const summary = list.map((s, k) => (k === 0 ? s.lines.join('\n') : `\n\n## ${s.heading}\n${s.lines.join('\n')}`)).join('');
  return { summary, ...(metadata && { metadata }), ...(tags && { tags }), ...(freshness && { freshness }), relations };
}

/** A relation line of `id`'s concept: `- [id] verb [other] Title (type)` or `- [other] Title (type) verb [id]`, each maybe with its mark. */
function relationLine(id: string, line: string): SeenRelation | undefined {
  const self = escapeRegExp(id);
  const out = new RegExp(`^- \\[${self}\\] (${VERB_ALTERNATIVES}) \\[([^\\]]+)\\] (.*) \\((${TYPE_ALTERNATIVES})\\)((?: ${WARNING_SIGN} .+)?)$`, 'su').exec(
    line,
  );
  if (out !== null) {
    const [, verb, other, title, type, mark] = out as unknown as [string, RelationVerb, string, string, NodeType, string];
    return { from: id, verb, to: other, mark: markOf(mark), other: { id: other, type, title } };
  }
  const into = new RegExp(`^- \\[([^\\]]+)\\] (.*) \\((${TYPE_ALTERNATIVES})\\) (${VERB_ALTERNATIVES}) \\[${self}\\]((?: ${WARNING_SIGN} .+)?)$`, 'su').exec(
    line,
  );
  if (into !== null) {
    const [, other, title, type, verb, mark] = into as unknown as [string, string, string, NodeType, RelationVerb, string];
    return { from: other, verb, to: id, mark: markOf(mark), other: { id: other, type, title } };
  }
  return undefined;
}

/** read_concept's answer for `id`, or why it cannot be read. */
function parseConcept(id: string, text: string, headings: Headings): Concept | string {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const [cite = '', typeLine = '', accessLine = ''] = lines;
  if (!cite.startsWith(`[${id}]`)) return 'the source answered read_concept for another node';
  const title = cite.slice(id.length + 2).trim();
  const type = /^Type: (.*)$/.exec(typeLine)?.[1] ?? '';
  if (!isNodeType(type)) return `its type ${JSON.stringify(type.slice(0, 80))} is not one of the contract's node types`;
  const access = /^Access: (.*)$/.exec(accessLine)?.[1] ?? '';
  if (!isTier(access)) return `its access ${JSON.stringify(access.slice(0, 80))} is not one of the contract's tiers`;
  let at = 3;
  let mark: Mark | null = null;
  if (lines[at]?.startsWith(`${WARNING_SIGN} `) === true) mark = markOf(lines[at++]!);
  const parts = sections(lines.slice(at), headings);
  if (typeof parts === 'string') return parts;
  const field = (section: Section | undefined, pattern: RegExp) =>
    (section?.lines ?? []).flatMap((line) => {
      const match = pattern.exec(line);
      return match === null ? [] : [[match[1]!, match[2]!] as const];
    });
  const freshness = new Map(field(parts.freshness, FRESHNESS_LINE));
  const relations: SeenRelation[] = [];
  const unreadable: string[] = [];
  let hiddenRelations = 0;
  for (const line of parts.relations.lines) {
    const hidden = /^\[hidden:(\d+)\] /.exec(line);
    if (hidden !== null) hiddenRelations += Number(hidden[1]);
    else if (line.startsWith('- [')) {
      const relation = relationLine(id, line);
      if (relation === undefined) unreadable.push(line);
      else relations.push(relation);
    }
  }
  return {
    id,
    type,
    title,
    access,
    mark,
    summary: parts.summary,
    metadata: field(parts.metadata, METADATA_LINE),
    tags: parts.tags === undefined ? [] : [...new Set(parts.tags.lines[0]!.split(', ').map((tag) => tag.trim()))],
    verified: freshness.get('Verified'),
    reviewBy: freshness.get('Review by'),
    relations,
    hiddenRelations,
    unreadable,
  };
}

/** The skill pack's counts: visible nodes per type (undefined when it gives none) and nodes above the tier; and every id it cites. */
function parsePack(text: string): { expected: Map<string, number> | undefined; hidden: number; ids: string[] } {
  const expected = new Map<string, number>();
  for (const match of text.matchAll(new RegExp(`^- (${TYPE_ALTERNATIVES}): (\\d+)$`, 'gmu')))
    if (!expected.has(match[1]!)) expected.set(match[1]!, Number(match[2]));
  const hidden = Number(/^\[hidden:(\d+)\] /m.exec(text)?.[1] ?? 0);
  // Markers are bracketed too, and a title may hold brackets: an id cited here that names no node is dropped when read.
  const ids = [...text.matchAll(/\[([^\]\n]+)\]/g)].map((m) => m[1]!).filter((id) => !/^(gap|hidden):/.test(id));
  return { expected: expected.size > 0 ? expected : undefined, hidden, ids: [...new Set(ids)] };
}

/** query_index's hits (`N. [id] Title · type · access <tier>`) and its hidden count. */
function parseHits(text: string): { hits: { id: string; type: NodeType }[]; hidden: number; lines: number } {
  const hits: { id: string; type: NodeType }[] = [];
  let lines = 0;
  for (const line of text.split('\n')) {
    if (!/^\d+\. \[/.test(line)) continue;
    lines += 1;
    const match = new RegExp(`^\\d+\\. \\[([^\\]]+)\\] .* · (${TYPE_ALTERNATIVES}) · access [a-z]+$`, 'su').exec(line);
    if (match !== null) hits.push({ id: match[1]!, type: match[2] as NodeType });
  }
  return { hits, hidden: Number(/^\[hidden:(\d+)\] /m.exec(text)?.[1] ?? 0), lines };
}

// ---------------------------------------------------------------------------------------------
// The sweep

/** The questions of a query_index sweep: prefix batches, longer prefixes where an answer was full, and the words of titles read. */
class Sweep {
  readonly #prefixes: string[][] = [];
  #nextPrefix = 0;
  readonly #words: string[] = [];
  #nextWord = 0;
  readonly #asked = new Set<string>();
  #turn = 0;

  constructor() {
    const pairs = PREFIX_ALPHABET.flatMap((a) => PREFIX_ALPHABET.map((b) => a + b));
    this.#batch(pairs);
  }

  #batch(prefixes: readonly string[]): void {
    for (let i = 0; i < prefixes.length; i += PREFIXES_PER_QUERY) this.#prefixes.push(prefixes.slice(i, i + PREFIXES_PER_QUERY));
  }

  /** The next question: prefixes and words in turn, so a source whose search reads `ab*` as a word still gets the words early. */
  next(): { query: string; prefixes: readonly string[] | undefined } | undefined {
    const wantWord = this.#turn++ % 2 === 1 || this.#nextPrefix >= this.#prefixes.length;
    if (wantWord && this.#nextWord < this.#words.length) {
      const word = this.#words[this.#nextWord++]!;
      return { query: word, prefixes: undefined };
    }
    const prefixes = this.#prefixes[this.#nextPrefix++];
    if (prefixes !== undefined) return { query: prefixes.map((p) => `${p}*`).join(' '), prefixes };
    const word = this.#words[this.#nextWord++];
    return word === undefined ? undefined : { query: word, prefixes: undefined };
  }

  /** An answer was full: each of its prefixes is asked alone, and a full single prefix one character longer. */
  full(prefixes: readonly string[]): void {
    if (prefixes.length > 1) for (const prefix of prefixes) this.#prefixes.push([prefix]);
    else if (prefixes[0] !== undefined && [...prefixes[0]].length < PREFIX_MAX_CHARS) this.#batch(PREFIX_ALPHABET.map((c) => prefixes[0] + c));
  }

  /** The words of a title, to be asked once each. */
  learn(text: string): void {
    for (const word of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
      if ([...word].length < 2 || [...word].length > 40 || this.#asked.has(word)) continue;
      this.#asked.add(word);
      this.#words.push(word);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Reading the source

/** The text of a tool's answer. */
type TextCall = (tool: string, args: Record<string, unknown>) => Promise<string>;

/** The sweep found more than SOURCE_NODES_MAX ids: the import stops as a whole. */
class Endless extends Error {}

interface Found {
  /** The type the source gave where it named the id (a hit or a relation); the read one once read. */
  type: string | undefined;
  /** Where the id was first seen: an id the skill pack seems to cite and no node has is not the source's fault. */
  readonly origin: 'pack' | 'search' | 'relation';
}

/** What reading the source gave. */
interface SourceRead {
  readonly concepts: Map<string, Concept>;
  /** Ids that could not be read or used, with the reason (brain nodes and directory nodes alike). */
  readonly refused: Map<string, string>;
  readonly hidden: number;
  readonly hiddenRelations: number;
  /** Visible nodes the skill pack counted that neither the sweep nor relations reached. */
  readonly unreached: number;
  readonly queries: number;
  /** Why the sweep stopped early, when it did. */
  readonly sweepStopped: string | undefined;
}

async function readSource(text: TextCall, progress: (line: string) => void): Promise<SourceRead | 'empty'> {
  const packText = await text('get_skill_pack', {});
  if (packText.startsWith(EMPTY_BRAIN_START)) return 'empty';
  const pack = parsePack(packText);
  const found = new Map<string, Found>();
  const refused = new Map<string, string>();
  const concepts = new Map<string, Concept>();
  const headings = new Headings();
  const sweep = new Sweep();
  /** Ids read_concept refused as above the tier, or that the pack seemed to cite and no node has: never asked again. */
  const aboveTier = new Set<string>();
  const dropped = new Set<string>();
  let hidden = pack.hidden;
  let queries = 0;
  let sweepStopped: string | undefined;

  const admit = (id: string, origin: Found['origin'], type?: string) => {
    const known = found.get(id);
    if (known !== undefined) {
      if (known.type === undefined) known.type = type;
      return;
    }
    if (refused.has(id) || dropped.has(id)) return;
    // Ids refused count too: a source naming endless bad ids stops as one naming endless good ones.
    if (found.size + refused.size >= SOURCE_NODES_MAX) throw new Endless(`the source named more than ${SOURCE_NODES_MAX} nodes; nothing was imported`);
    const bad = badSourceId(id);
    if (bad !== undefined) return void refused.set(id, bad);
    found.set(id, { type, origin });
  };
  const readOne = async (id: string) => {
    let answer: string;
    try {
      answer = await text('read_concept', { id });
    } catch (error) {
      if (!(error instanceof ItemRefused)) throw error;
      const drop = error.message.includes(ABOVE_TIER) || (error.message.includes(UNKNOWN_NODE) && found.get(id)?.origin === 'pack');
      if (error.message.includes(ABOVE_TIER)) aboveTier.add(id);
      if (drop) {
        found.delete(id);
        dropped.add(id);
      } else refused.set(id, error.message.includes(UNKNOWN_NODE) ? 'the source named it, but read_concept knows no node of this id' : error.message);
      return;
    }
    const concept = parseConcept(id, answer, headings);
    if (typeof concept === 'string') return void refused.set(id, concept);
    concepts.set(id, concept);
    found.get(id)!.type = concept.type;
    if (!isDirectory(id, concept.type)) sweep.learn(concept.title);
    for (const relation of concept.relations) admit(relation.other.id, 'relation', relation.other.type);
  };
  /** Reads every id found and not read yet, and those their relations name. */
  const readAll = async () => {
    for (;;) {
      const unread = [...found.keys()].filter((id) => !concepts.has(id) && !refused.has(id));
      if (unread.length === 0) return;
      for (let i = 0; i < unread.length; i += READ_CONCURRENCY) {
        await Promise.all(unread.slice(i, i + READ_CONCURRENCY).map(readOne));
        if (concepts.size % 100 < READ_CONCURRENCY) progress(`read ${concepts.size} of ${found.size} nodes found`);
      }
    }
  };
  /** The types the skill pack counted more nodes of than were found (all of them when it counted none). */
  const short = (): string[] | undefined => {
    if (pack.expected === undefined) return undefined;
    const have = new Map<string, number>();
    for (const [id, { type }] of found) if (type !== undefined && !refused.has(id)) have.set(type, (have.get(type) ?? 0) + 1);
    return [...pack.expected].filter(([type, count]) => (have.get(type) ?? 0) < count).map(([type]) => type);
  };

  progress(`get_skill_pack: ${[...(pack.expected?.values() ?? [])].reduce((a, b) => a + b, 0)} visible nodes counted, ${pack.hidden} above the tier`);
  for (const id of pack.ids) admit(id, 'pack');
  await readAll();
  for (let missing = short(); missing === undefined || missing.length > 0; missing = short()) {
    if (queries >= SWEEP_QUERIES_MAX) {
      sweepStopped = `the sweep stopped after ${SWEEP_QUERIES_MAX} query_index calls`;
      break;
    }
    const question = sweep.next();
    if (question === undefined) break;
    queries += 1;
    let answer: string;
    try {
      answer = await text('query_index', { query: question.query, limit: QUERY_LIMIT, ...(missing === undefined ? {} : { types: missing }) });
    } catch (error) {
      // One refused question is every question refused (a syntax the source does not take, a scope it lacks): the sweep ends, what it found is read.
      if (!(error instanceof ItemRefused)) throw error;
      sweepStopped = `the sweep stopped: ${error.message}`;
      break;
    }
    const { hits, hidden: hiddenMatches, lines } = parseHits(answer);
    hidden = Math.max(hidden, hiddenMatches);
    for (const hit of hits) admit(hit.id, 'search', hit.type);
    if (question.prefixes !== undefined && lines >= QUERY_LIMIT) sweep.full(question.prefixes);
    if (queries % 100 === 0) progress(`query_index: ${queries} questions, ${found.size} nodes found`);
    // Counts reached by the types hits claim are checked by reading: a read gives the type, and relations may name more.
    if (short()?.length === 0) await readAll();
  }
  await readAll();
  const read = new Map<string, number>();
  for (const concept of concepts.values()) read.set(concept.type, (read.get(concept.type) ?? 0) + 1);
  const unreached = [...(pack.expected ?? [])].reduce((sum, [type, count]) => sum + Math.max(0, count - (read.get(type) ?? 0)), 0);
  const hiddenRelations = [...concepts.values()].reduce((sum, c) => sum + c.hiddenRelations, 0);
  return { concepts, refused, hidden: Math.max(hidden, aboveTier.size), hiddenRelations, unreached, queries, sweepStopped };
}

// ---------------------------------------------------------------------------------------------
// The brain file

interface FileNode {
  readonly sourceId: string;
  readonly entry: Record<string, unknown>;
}

interface FileRelation {
  /** Source ids, for the report. */
  readonly name: string;
  /** The source ids of its ends. */
  readonly ends: readonly [string, string];
  readonly entry: { from: string; verb: RelationVerb; to: string; mark?: Mark };
}

/** Why a text cannot be a title, tag or metadata value here (a metadata value may be empty), or undefined. */
function badName(what: string, value: string, max: number, options: { blank?: boolean } = {}): string | undefined {
  const problem = unstorableText(value) ?? unsafeName(value);
  if (problem !== undefined) return `${what} ${problem}`;
  if (value.trim() === '' && options.blank !== true) return `${what} is blank`;
  if (characters(value) > max) return `${what} is longer than ${max} characters`;
  return undefined;
}

/** A read concept as an entry of the brain file, or why it cannot be one. */
function fileNode(concept: Concept, localId: string): Record<string, unknown> | string {
  if (concept.access === 'department' || concept.access === 'project')
    return `access ${concept.access}: read_concept does not say which ${concept.access}'s members see it, and a guess could show it to others`;
  const problems = [
    badName('title', concept.title, LOCAL.titleChars),
    unstorableText(concept.summary) && `summary ${unstorableText(concept.summary)}`,
    characters(concept.summary) > LOCAL.summaryChars ? `summary is longer than ${LOCAL.summaryChars} characters` : undefined,
    concept.tags.length > LOCAL.tags ? `more than ${LOCAL.tags} tags` : undefined,
    ...concept.tags.map((tag) => badName('a tag', tag, LOCAL.tagChars)),
    ...concept.metadata.map(([key, value]) => badName(`metadata ${key}`, value, LOCAL.metadataValueChars, { blank: true })),
    concept.verified !== undefined && !INSTANT.test(concept.verified) ? 'Verified is not an ISO 8601 instant' : undefined,
    concept.reviewBy !== undefined && !INSTANT.test(concept.reviewBy) ? 'Review by is not an ISO 8601 instant' : undefined,
  ].filter((problem): problem is string => typeof problem === 'string');
  if (problems.length > 0) return problems.join('; ');
  const freshness = { ...(concept.verified && { verified: concept.verified }), ...(concept.reviewBy && { review_by: concept.reviewBy }) };
  return {
    id: localId,
    type: concept.type,
    title: concept.title.trim(),
    access: concept.access,
    ...(concept.summary !== '' && { summary: concept.summary }),
    ...(concept.metadata.length > 0 && { metadata: Object.fromEntries(concept.metadata) }),
    ...(concept.tags.length > 0 && { tags: concept.tags }),
    ...(Object.keys(freshness).length > 0 && { freshness }),
    ...(concept.mark !== null && { mark: concept.mark }),
  };
}

/**
 * Characters YAML does not take as they are (DEL, the C1 controls, U+FFFE/U+FFFF) or may take for
 * line breaks (U+2028/U+2029, NEL), written as escapes: the file is JSON, which the planner reads
 * as YAML, and JSON.stringify escapes only the C0 controls.
 */
const YAML_UNSAFE = /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/g;
const fileLine = (value: unknown): string => JSON.stringify(value).replace(YAML_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The brain file, one entry per line, so that a problem the planner finds on a line names its item. */
function brainFile(
  nodes: ReadonlyMap<string, FileNode>,
  relations: ReadonlyMap<string, FileRelation>,
): { text: string; items: Map<number, { kind: 'node' | 'relation'; key: string }> } {
  const items = new Map<number, { kind: 'node' | 'relation'; key: string }>();
  const lines = ['{', '"nodes": ['];
  let left = nodes.size;
  for (const [key, node] of nodes) {
    items.set(lines.length + 1, { kind: 'node', key });
    lines.push(`${fileLine(node.entry)}${--left > 0 ? ',' : ''}`);
  }
  lines.push('],', '"relations": [');
  left = relations.size;
  for (const [key, relation] of relations) {
    items.set(lines.length + 1, { kind: 'relation', key });
    lines.push(`${fileLine(relation.entry)}${--left > 0 ? ',' : ''}`);
  }
  lines.push(']', '}');
  return { text: `${lines.join('\n')}\n`, items };
}

// ---------------------------------------------------------------------------------------------
// The report

interface Counts {
  read: number;
  created: number;
  updated: number;
  unchanged: number;
  hidden: number;
  refused: Refusal[];
}

interface BrainReport {
  nodes: Counts & {
    /** Directory nodes read for their relations (the org file keeps the directory here). */
    directory: number;
    /** Visible nodes the source counted that were not reached. */
    unreached: number;
    /** Source ids the brain file cannot hold, and the local id each was given. */
    mapped: { source: string; local: string }[];
  };
  relations: Counts;
  /** Why nothing was imported, when the import failed as a whole. */
  failed: { reason: string }[];
  /** query_index calls, and why the sweep stopped early. */
  sweep: { queries: number; stopped: string | null };
}

const noCounts = (): Counts => ({ read: 0, created: 0, updated: 0, unchanged: 0, hidden: 0, refused: [] });

function emptyReport(): BrainReport {
  return { nodes: { ...noCounts(), directory: 0, unreached: 0, mapped: [] }, relations: noCounts(), failed: [], sweep: { queries: 0, stopped: null } };
}

/** The planner's problems: `{ line, message }` from the error's details, else read from its lines. */
function planProblems(error: { message: string; details?: Record<string, unknown> | undefined }, fileName: string): { line: number; message: string }[] {
  const listed = error.details?.['errors'];
  if (Array.isArray(listed))
    return listed.flatMap((item) =>
      isRecord(item) && typeof item['line'] === 'number' && typeof item['message'] === 'string' ? [{ line: item['line'], message: item['message'] }] : [],
    );
  const prefix = `${fileName}:`;
  return error.message.split('\n').flatMap((line) => {
    const match = line.startsWith(prefix) ? /^(\d+): (.*)$/s.exec(line.slice(prefix.length)) : null;
    return match === null ? [] : [{ line: Number(match[1]), message: match[2]! }];
  });
}

/** Builds the file from what was read, item by item, and applies it; refusals go into the report. */
async function writeBrain(context: McpImportContext, source: SourceRead, report: BrainReport): Promise<void> {
  const { nodes, relations } = report;
  const refuse = (counts: Counts, name: string, reason: string) => counts.refused.push({ name, reason });
  const localIds = new Map<string, string>();
  /** Local id → source id: two source ids given one local id are told apart. */
  const sourceIds = new Map<string, string>();
  const candidates = new Map<string, FileNode>();
  for (const [id, reason] of source.refused) refuse(nodes, id, reason);
  for (const concept of [...source.concepts.values()].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    if (isDirectory(concept.id, concept.type)) {
      nodes.directory += 1;
      continue;
    }
    nodes.read += 1;
    const localId = localNodeId(concept.id);
    const taken = sourceIds.get(localId);
    if (taken !== undefined) {
      refuse(nodes, concept.id, `its local id ${localId} is already the one of ${taken}`);
      continue;
    }
    const entry = fileNode(concept, localId);
    if (typeof entry === 'string') {
      refuse(nodes, concept.id, entry);
      continue;
    }
    localIds.set(concept.id, localId);
    sourceIds.set(localId, concept.id);
    if (localId !== concept.id) nodes.mapped.push({ source: concept.id, local: localId });
    candidates.set(concept.id, { sourceId: concept.id, entry });
  }

  // Every relation once, as either end's concept gave it.
  const seen = new Map<string, SeenRelation>();
  for (const concept of source.concepts.values()) {
    for (const relation of concept.relations) {
      if (isDirectoryRelation(relation.from, relation.verb, relation.to)) continue;
      const key = `${relation.from}\u0000${relation.verb}\u0000${relation.to}`;
      if (!seen.has(key)) seen.set(key, relation);
    }
    for (const line of concept.unreadable) refuse(relations, line.slice(2, 202), 'the source gave a relation line that is not in the contract’s form');
  }
  relations.read = seen.size + relations.refused.length;
  relations.hidden = source.hiddenRelations;
  const candidateRelations = new Map<string, FileRelation>();
  /** How the file names an end, or why it cannot. */
  const endOf = (id: string): string | { reason: string } => {
    const concept = source.concepts.get(id);
    if (concept === undefined) return { reason: `its end ${id} was not read${source.refused.has(id) ? ` (${source.refused.get(id)})` : ''}` };
    if (!isDirectory(id, concept.type)) return localIds.get(id) ?? { reason: `its end ${id} was refused` };
    // An agent is named by its name here, as the org file names it; the source's directory id means nothing to this directory.
    if (id.startsWith('agent:'))
      return badName('the agent’s name', concept.title, 200) === undefined ? `agent:${concept.title.trim()}` : { reason: `its end ${id} has no usable name` };
    return id;
  };
  for (const [key, relation] of [...seen].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const name = `${relation.from} ${relation.verb} ${relation.to}`;
    const [from, to] = [endOf(relation.from), endOf(relation.to)];
    if (typeof from !== 'string' || typeof to !== 'string') {
      refuse(relations, name, typeof from !== 'string' ? from.reason : (to as { reason: string }).reason);
      continue;
    }
    const entry = { from, verb: relation.verb, to, ...(relation.mark !== null && { mark: relation.mark }) };
    candidateRelations.set(key, { name, ends: [relation.from, relation.to], entry });
  }
  nodes.hidden = source.hidden;
  nodes.unreached = source.unreached;
  const fileName = `${context.source.url.host}.brain.json`;
  for (let round = 0; ; round += 1) {
    const file = brainFile(candidates, candidateRelations);
    if (Buffer.byteLength(file.text) > LOCAL.importBytes)
      return void report.failed.push({
        reason: `the brain read is larger than ${LOCAL.importBytes} bytes as a brain file, the most brain.import takes; nothing was imported`,
      });
    let changes: readonly { readonly action: string; readonly kind: string }[];
    try {
      ({ changes } = await context.run('brain.import', { tenant: context.tenant, source: file.text, fileName, dryRun: context.dryRun }));
    } catch (error) {
      if (!isKgwError(error, 'validation')) throw error;
      const problems = planProblems(error, fileName);
      const items = problems.map((problem) => ({ problem, item: file.items.get(problem.line) }));
      const whole = items.filter(({ item }) => item === undefined);
      if (whole.length > 0 || problems.length === 0 || round + 1 >= PLAN_ROUNDS_MAX) {
        const reasons = whole.length > 0 ? whole.map(({ problem }) => problem.message) : [error.message];
        return void report.failed.push({ reason: `brain.import refused the file, so nothing was imported: ${reasons.join('; ')}` });
      }
      for (const { problem, item } of items) {
        if (item?.kind === 'node' && candidates.delete(item.key)) refuse(nodes, item.key, problem.message);
        const relation = item?.kind === 'relation' ? candidateRelations.get(item.key) : undefined;
        if (relation !== undefined && candidateRelations.delete(item!.key)) refuse(relations, relation.name, problem.message);
      }
      // A relation to a node the planner refused goes with it.
      for (const [key, relation] of candidateRelations) {
        const gone = relation.ends.find((end) => localIds.has(end) && !candidates.has(end));
        if (gone === undefined) continue;
        candidateRelations.delete(key);
        refuse(relations, relation.name, `its end ${gone} was refused`);
      }
      continue;
    }
    const byKind = (kind: string, action: string) => changes.filter((c) => c.kind === kind && c.action === action).length;
    nodes.created = byKind('brain node', 'create');
    nodes.updated = byKind('brain node', 'update');
    nodes.unchanged = candidates.size - nodes.created - nodes.updated;
    relations.created = byKind('brain relation', 'add');
    relations.updated = byKind('brain relation', 'update');
    relations.unchanged = candidateRelations.size - relations.created - relations.updated;
    return;
  }
}

function summaryLines(report: BrainReport, dryRun: boolean): string[] {
  const would = dryRun ? 'would be ' : '';
  const { nodes, relations } = report;
  const lines = [
    `nodes: ${nodes.read} read, ${nodes.created} ${would}created, ${nodes.updated} ${would}updated, ${nodes.unchanged} unchanged, ${nodes.refused.length} refused, ` +
      `${nodes.hidden} above the token's tier (not copied)`,
    `relations: ${relations.read} read, ${relations.created} ${would}created, ${relations.updated} ${would}updated, ${relations.unchanged} unchanged, ` +
      `${relations.refused.length} refused, ${relations.hidden} to nodes above the token's tier (not copied)`,
  ];
  if (nodes.directory > 0) lines.push(`directory: ${nodes.directory} nodes read for their relations (this gateway's org file keeps its own directory)`);
  if (nodes.unreached > 0) lines.push(`unreached: ${nodes.unreached} visible nodes the source counted were found neither by query_index nor through relations`);
  if (report.sweep.stopped !== null) lines.push(visible(report.sweep.stopped, { inline: true }));
  for (const item of nodes.mapped) lines.push(`  node ${visible(item.source, { inline: true })} is ${item.local} here`);
  for (const item of nodes.refused) lines.push(`  refused node ${visible(item.name, { inline: true })}: ${visible(item.reason, { inline: true })}`);
  for (const item of relations.refused) lines.push(`  refused relation ${visible(item.name, { inline: true })}: ${visible(item.reason, { inline: true })}`);
  for (const item of report.failed) lines.push(`failed: ${visible(item.reason, { inline: true })}`);
  return lines;
}

/** The Company Brain reader (kinds for --only: nodes, which brings their relations along). */
export const brainReader: DialectReader = {
  kinds: ['nodes'],
  async read(context): Promise<DialectOutcome> {
    const report = emptyReport();
    // `nodes` is the one kind (their relations come along), so --only cannot leave it out; should a kind be added, this is where it is skipped.
    if (context.only !== undefined && !context.only.has('nodes')) return { report: { ...report }, lines: [], refused: false };
    try {
      const source = await readSource((tool, args) => context.source.text(tool, args), context.progress);
      if (source === 'empty') {
        const lines = ['the source has no brain content yet: nothing to import'];
        return { report: { ...report }, lines, refused: false };
      }
      report.sweep = { queries: source.queries, stopped: source.sweepStopped ?? null };
      await writeBrain(context, source, report);
    } catch (error) {
      if (!(error instanceof Endless) && !(error instanceof ItemRefused) && !(error instanceof SourceError)) throw error;
      report.failed.push({ reason: error.message });
    }
    const refused = report.failed.length > 0 || report.nodes.refused.length > 0 || report.relations.refused.length > 0 || report.nodes.unreached > 0;
    return { report: { ...report }, lines: summaryLines(report, context.dryRun), refused };
  },
};
