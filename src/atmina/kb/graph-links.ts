import { fileNameOf, KB_LINK_TYPES } from '../../../connectors/graph/contract.ts';
import type { KbFileRecord, KbLinkInput, KbLinkReads, KbLinkType, KbLinkRecord } from '../../../connectors/graph/contract.ts';

/**
 * `related` over either graph store. A stored reference names candidate paths (and, for a bare
 * wiki name, a file name), never a file: it is resolved here, when it is read, against the KB's
 * live files the store knows. So a file that appears at a path resolves the references to it,
 * a file that moves away leaves them unresolved, and a moved file's own relative references
 * were resolved from its new folder when its move was projected. docs/atmina.md ("related").
 */

/** Each list of an answer (outgoing, incoming, unresolved) holds at most this many entries. */
export const RELATED_LIST_MAX = 200;
/** Each read of a walk returns at most this many rows; a walk cut by it says `truncated`. */
export const RELATED_SCAN_MAX = 5000;

export interface RelatedInput {
  readonly tenantId: string;
  readonly kbId: string;
  readonly fileId: string;
  readonly depth: 1 | 2;
  /** Only references of these types; all when absent. */
  readonly types?: readonly KbLinkType[] | undefined;
}

export interface RelatedEntry {
  readonly file: KbFileRecord;
  readonly type: KbLinkType;
  readonly key: string | undefined;
  readonly depth: 1 | 2;
  /** At depth 2: the path of the depth-1 file it was reached through. */
  readonly via: string | undefined;
}

export interface UnresolvedEntry {
  /** The path the reference points at (or its target as written). */
  readonly path: string;
  readonly type: KbLinkType;
  readonly key: string | undefined;
  readonly fromPath: string;
}

export interface RelatedFiles {
  /** The file as the graph knows it; undefined when it holds no such live file. */
  readonly file: KbFileRecord | undefined;
  readonly outgoing: readonly RelatedEntry[];
  readonly incoming: readonly RelatedEntry[];
  readonly unresolved: readonly UnresolvedEntry[];
  /** Whether a list was cut at RELATED_LIST_MAX or a scan at RELATED_SCAN_MAX. */
  readonly truncated: boolean;
}

interface Resolved {
  readonly link: KbLinkRecord;
  readonly target: KbFileRecord | undefined;
}

const unique = <T>(items: Iterable<T>): T[] => [...new Set(items)];
const byPath = (a: { path: string }, b: { path: string }): number => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

class Walk {
  truncated = false;
  readonly #reads: KbLinkReads;
  readonly #input: RelatedInput;
  readonly #types: readonly KbLinkType[];

  constructor(reads: KbLinkReads, input: RelatedInput) {
    this.#reads = reads;
    this.#input = input;
    this.#types = input.types ?? KB_LINK_TYPES;
  }

  #cut<T>(rows: T[]): T[] {
    if (rows.length >= RELATED_SCAN_MAX) this.truncated = true;
    return rows;
  }

  async files(by: { ids?: readonly string[]; paths?: readonly string[]; names?: readonly string[] }): Promise<KbFileRecord[]> {
    if ((by.ids?.length ?? 0) + (by.paths?.length ?? 0) + (by.names?.length ?? 0) === 0) return [];
    return this.#cut(await this.#reads.files({ tenantId: this.#input.tenantId, kbId: this.#input.kbId, ...by, limit: RELATED_SCAN_MAX }));
  }

  /** Each link with the live file it resolves to: its first candidate path held by a file, else its name held by exactly one. */
  async resolve(links: readonly KbLinkRecord[]): Promise<Resolved[]> {
    const files = await this.files({
      paths: unique(links.flatMap((l) => l.paths)),
      names: unique(links.flatMap((l) => (l.name === undefined ? [] : [l.name]))),
    });
    const atPath = new Map<string, KbFileRecord>();
    const named = new Map<string, KbFileRecord[]>();
    // Two files can share a path for a moment (a move and a create projected out of order): the lower id answers.
    for (const file of [...files].sort((a, b) => (a.fileId < b.fileId ? -1 : 1))) {
      if (!atPath.has(file.path)) atPath.set(file.path, file);
      const name = fileNameOf(file.path);
      named.set(name, [...(named.get(name) ?? []), file]);
    }
    return links.map((link) => {
      for (const path of link.paths) {
        const file = atPath.get(path);
        if (file !== undefined) return { link, target: file };
      }
      const candidates = link.name === undefined ? [] : (named.get(link.name) ?? []);
      return { link, target: candidates.length === 1 ? candidates[0] : undefined };
    });
  }

  async outgoing(sources: readonly KbFileRecord[]): Promise<Resolved[]> {
    if (sources.length === 0) return [];
    const links = this.#cut(
      await this.#reads.linksFrom({
        tenantId: this.#input.tenantId,
        kbId: this.#input.kbId,
        fileIds: sources.map((s) => s.fileId),
        types: this.#types,
        limit: RELATED_SCAN_MAX,
      }),
    );
    return this.resolve(links);
  }

  /** The references that resolve to one of `targets`, with the files making them. */
  async incoming(targets: readonly KbFileRecord[]): Promise<{ resolved: Resolved; source: KbFileRecord }[]> {
    if (targets.length === 0) return [];
    const links = this.#cut(
      await this.#reads.linksTo({
        tenantId: this.#input.tenantId,
        kbId: this.#input.kbId,
        paths: unique(targets.map((t) => t.path)),
        names: unique(targets.map((t) => fileNameOf(t.path))),
        types: this.#types,
        limit: RELATED_SCAN_MAX,
      }),
    );
    const ids = new Set(targets.map((t) => t.fileId));
    const hits = (await this.resolve(links)).filter((r) => r.target !== undefined && ids.has(r.target.fileId));
    const sources = new Map((await this.files({ ids: unique(hits.map((h) => h.link.fromFileId)) })).map((f) => [f.fileId, f]));
    return hits.flatMap((resolved) => {
      const source = sources.get(resolved.link.fromFileId);
      return source === undefined ? [] : [{ resolved, source }];
    });
  }
}

function entry(file: KbFileRecord, link: KbLinkRecord, depth: 1 | 2, via?: string): RelatedEntry {
  return { file, type: link.type, key: link.key, depth, via };
}

const entryOrder = (a: RelatedEntry, b: RelatedEntry): number =>
  a.depth - b.depth ||
  byPath(a.file, b.file) ||
  (a.type < b.type ? -1 : a.type > b.type ? 1 : 0) ||
  ((a.key ?? '') < (b.key ?? '') ? -1 : (a.key ?? '') > (b.key ?? '') ? 1 : 0);

/** Depth 1: one entry per file and reference type (and key); depth 2: one per file not met before. */
function entries(start: KbFileRecord, first: readonly [KbFileRecord, KbLinkRecord][], second: readonly [KbFileRecord, KbLinkRecord, string][]): RelatedEntry[] {
  const out = new Map<string, RelatedEntry>();
  for (const [file, link] of first) {
    if (file.fileId === start.fileId) continue;
    const id = `${file.fileId}\u0000${link.type}\u0000${link.key ?? ''}`;
    if (!out.has(id)) out.set(id, entry(file, link, 1));
  }
  const met = new Set([start.fileId, ...[...out.values()].map((e) => e.file.fileId)]);
  const far = new Map<string, RelatedEntry>();
  for (const [file, link, via] of [...second].sort((a, b) => byPath(a[0], b[0]) || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0))) {
    if (met.has(file.fileId) || far.has(file.fileId)) continue;
    far.set(file.fileId, entry(file, link, 2, via));
  }
  return [...out.values(), ...far.values()].sort(entryOrder);
}

/**
 * A KB file's references at depth 1 or 2, read through either graph store's `kbLinks()`: the
 * files it refers to, the files referring to it, and its references no live file answers. Read
 * within the tenant and the KB only.
 */
export async function relatedFiles(reads: KbLinkReads, input: RelatedInput): Promise<RelatedFiles> {
  const walk = new Walk(reads, input);
  const [start] = await walk.files({ ids: [input.fileId] });
  if (start === undefined) return { file: undefined, outgoing: [], incoming: [], unresolved: [], truncated: false };

  const out1 = await walk.outgoing([start]);
  const in1 = await walk.incoming([start]);
  const unresolved: UnresolvedEntry[] = out1
    .filter((r) => r.target === undefined)
    .map((r) => ({ path: r.link.target, type: r.link.type, key: r.link.key, fromPath: start.path }));

  const firstOut = out1.flatMap((r) => (r.target === undefined ? [] : [[r.target, r.link] as [KbFileRecord, KbLinkRecord]]));
  const firstIn = in1.map(({ resolved, source }) => [source, resolved.link] as [KbFileRecord, KbLinkRecord]);
  const secondOut: [KbFileRecord, KbLinkRecord, string][] = [];
  const secondIn: [KbFileRecord, KbLinkRecord, string][] = [];
  if (input.depth === 2) {
    const near = new Map(firstOut.filter(([f]) => f.fileId !== start.fileId).map(([f]) => [f.fileId, f]));
    for (const r of await walk.outgoing([...near.values()])) {
      const via = near.get(r.link.fromFileId);
      if (via === undefined) continue;
      if (r.target === undefined) unresolved.push({ path: r.link.target, type: r.link.type, key: r.link.key, fromPath: via.path });
      else secondOut.push([r.target, r.link, via.path]);
    }
    const sources = new Map(firstIn.filter(([f]) => f.fileId !== start.fileId).map(([f]) => [f.fileId, f]));
    for (const { resolved, source } of await walk.incoming([...sources.values()])) {
      const via = resolved.target === undefined ? undefined : sources.get(resolved.target.fileId);
      if (via !== undefined) secondIn.push([source, resolved.link, via.path]);
    }
  }

  const outgoing = entries(start, firstOut, secondOut);
  const incoming = entries(start, firstIn, secondIn);
  const seen = new Set<string>();
  const misses = unresolved
    .filter((u) => {
      const id = `${u.fromPath}\u0000${u.type}\u0000${u.key ?? ''}\u0000${u.path}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    })
    .sort(
      (a, b) => (a.fromPath === start.path ? 0 : 1) - (b.fromPath === start.path ? 0 : 1) || byPath(a, b) || byPath({ path: a.fromPath }, { path: b.fromPath }),
    );
  const cut = outgoing.length > RELATED_LIST_MAX || incoming.length > RELATED_LIST_MAX || misses.length > RELATED_LIST_MAX;
  return {
    file: start,
    outgoing: outgoing.slice(0, RELATED_LIST_MAX),
    incoming: incoming.slice(0, RELATED_LIST_MAX),
    unresolved: misses.slice(0, RELATED_LIST_MAX),
    truncated: walk.truncated || cut,
  };
}

/**
 * The live file each reference names, resolved as `related` resolves them (its first candidate
 * path held by a file, else its bare name held by exactly one), within one KB: the console's
 * wiki links go where `related` says they go.
 */
export async function resolveReferences(
  reads: KbLinkReads,
  input: { readonly tenantId: string; readonly kbId: string },
  references: readonly KbLinkInput[],
): Promise<(KbFileRecord | undefined)[]> {
  if (references.length === 0) return [];
  const walk = new Walk(reads, { ...input, fileId: '', depth: 1 });
  const resolved = await walk.resolve(references.map((reference) => ({ ...reference, fromFileId: '' })));
  return resolved.map((entry) => entry.target);
}
