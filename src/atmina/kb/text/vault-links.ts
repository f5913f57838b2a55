import { parseFrontMatter } from './front-matter.ts';
import { folderOf } from './paths.ts';
import { wikiReference } from './references.ts';

/**
 * Wiki links of a note-taking vault (Obsidian's rules) made to name the same files in a
 * Knowledge Base. A vault resolves `[[Name]]` more loosely than a KB does: names match in any
 * case, a name several files share goes to the nearest of them, and a note's front-matter
 * `aliases` name it too. An import also maps file names a KB cannot hold (kgw import folder).
 * So each `[[target]]` and `![[embed]]` is resolved twice, as the vault would and as the KB's
 * `related` would (references.ts); when both find the same file, or the vault finds none, the
 * link stays as written, and otherwise it is rewritten as a path relative to the note
 * (`[[../Notes/Welcome|Home]]`), which both resolve alike. The text shown is kept: a link
 * without a label gets its old target as the label. Pure and deterministic, so an import run
 * again sends the same bytes. Links in front matter, fenced code and code spans are left alone.
 */

/** Aliases read per note (front matter `aliases`/`alias`), and the characters of each. */
const ALIASES_MAX = 100;
const ALIAS_MAX_CHARS = 200;
/** A wiki link's inside longer than this is left as written (the KB's link scanner stops there too). */
const INNER_MAX_CHARS = 1000;

/** One file of the vault: its path there (the links name it so) and its path in the KB. */
export interface VaultFile {
  readonly source: string;
  readonly path: string;
}

const fold = (text: string): string => text.normalize('NFC').toLowerCase();
const nameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
const withoutMd = (path: string): string => (/\.md$/i.test(path) ? path.slice(0, -3) : path);
const depth = (path: string): number => path.split('/').length;
const byPath = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The aliases a note's front matter gives it (a list or one string), bounded. */
export function aliasesOf(markdown: string): string[] {
  const { data } = parseFrontMatter(markdown);
  const value = data['aliases'] ?? data['alias'];
  const list = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  return list
    .slice(0, ALIASES_MAX)
    .filter((item): item is string => typeof item === 'string')
    .map((item) => item.trim())
    .filter((item) => item !== '' && item.length <= ALIAS_MAX_CHARS);
}

/** The files of a vault and its notes' aliases, for resolving links as the vault and as the KB would. */
export class VaultIndex {
  readonly #kbPaths = new Set<string>();
  readonly #kbNames = new Map<string, string[]>();
  /** Source path, folded → KB path. */
  readonly #sources = new Map<string, string>();
  /** Source file name (and a note's name without `.md`), folded → KB paths. */
  readonly #names = new Map<string, string[]>();
  readonly #aliases = new Map<string, string[]>();
  readonly #toKb = new Map<string, string>();

  constructor(files: readonly VaultFile[]) {
    for (const file of files) {
      this.#kbPaths.add(file.path);
      push(this.#kbNames, nameOf(file.path), file.path);
      this.#toKb.set(file.source, file.path);
      this.#sources.set(fold(file.source), file.path);
      const name = fold(nameOf(file.source));
      push(this.#names, name, file.path);
      if (name.endsWith('.md')) push(this.#names, name.slice(0, -3), file.path);
    }
  }

  /** Records the aliases of the note at vault path `source`. */
  addAliases(source: string, aliases: readonly string[]): void {
    const path = this.#toKb.get(source);
    if (path !== undefined) for (const alias of aliases) push(this.#aliases, fold(alias), path);
  }

  /** The KB path of the file a vault resolves `target` (a link's inside, without label or heading) to, from the note at `from` (a vault path). */
  vaultTarget(target: string, from: string): string | undefined {
    const folded = fold(target.replace(/^\/+/, ''));
    if (folded === '') return undefined;
    if (folded.includes('/')) {
      const folder = fold(folderOf(from));
      for (const candidate of [folded, `${folded}.md`, ...(folder === '' ? [] : [`${folder}/${folded}`, `${folder}/${folded}.md`])]) {
        const path = this.#sources.get(normalise(candidate));
        if (path !== undefined) return path;
      }
      return undefined;
    }
    const named = this.#names.get(folded) ?? [];
    if (named.length === 1) return named[0];
    if (named.length > 1) {
      // Several files share the name: the one beside the note, else the shallowest (then the first by path).
      const here = folderOf(this.#toKb.get(from) ?? '');
      return named.find((path) => folderOf(path) === here) ?? [...named].sort((a, b) => depth(a) - depth(b) || byPath(a, b))[0];
    }
    const aliased = [...new Set(this.#aliases.get(folded) ?? [])];
    return aliased.length === 1 ? aliased[0] : undefined;
  }

  /** The KB path `related` resolves the wiki link `inner` in the KB file at `from` to, among the vault's files. */
  kbTarget(inner: string, from: string): string | undefined {
    const reference = wikiReference(inner, from, 'wiki');
    if (reference === undefined) return undefined;
    const at = reference.paths.find((path) => this.#kbPaths.has(path));
    if (at !== undefined) return at;
    const named = reference.name === undefined ? [] : (this.#kbNames.get(reference.name) ?? []);
    return named.length === 1 ? named[0] : undefined;
  }

  /** The wiki target that names `path` from the KB file at `from` (relativeWikiTarget). */
  relativeTarget(path: string, from: string): string {
    return relativeWikiTarget(path, from, (other) => this.#kbPaths.has(other));
  }
}

/**
 * The wiki target that names the KB file `path` from the KB file at `from`: relative to the
 * folder of `from`, with a note's `.md` left off unless `exists` says a file has that shorter path.
 */
export function relativeWikiTarget(path: string, from: string, exists: (path: string) => boolean): string {
  const base = folderOf(from).split('/').filter(Boolean);
  const parts = path.split('/');
  let shared = 0;
  while (shared < base.length && shared < parts.length - 1 && base[shared] === parts[shared]) shared += 1;
  const relative = [...base.slice(shared).map(() => '..'), ...parts.slice(shared)].join('/');
  const short = withoutMd(relative);
  return short !== relative && !exists(withoutMd(path)) ? short : relative;
}

function push(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else if (!list.includes(value)) list.push(value);
}

/** `a/./b/../c` → `a/c`; a path that climbs above the root is returned as is (it names no file). */
function normalise(path: string): string {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) return path;
      out.pop();
    } else out.push(part);
  }
  return out.join('/');
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const WIKI = /(!?)\[\[([^[\]\n]+)\]\]/g;
const CODE_SPAN = /(`+)[\s\S]*?\1/g;
/** Characters a rewritten target cannot hold: they end or split a wiki link. */
const NOT_IN_TARGET = /[|#[\]^]/;

/**
 * `markdown`, the note at vault path `source` and KB path `path`, with each wiki link the KB would
 * resolve otherwise than the vault rewritten (see above); `links` counts the rewritten links.
 */
export function relinkNote(markdown: string, source: string, path: string, index: VaultIndex): { text: string; links: number } {
  const lines = markdown.split('\n');
  const { endLine } = parseFrontMatter(markdown);
  let links = 0;
  let fence: string | undefined;
  const relink = (whole: string, bang: string, inner: string): string => {
    if (inner.length > INNER_MAX_CHARS) return whole;
    const cut = inner.search(/[|#]/);
    const target = (cut < 0 ? inner : inner.slice(0, cut)).trim();
    const rest = cut < 0 ? '' : inner.slice(cut);
    const wanted = index.vaultTarget(target, source);
    if (wanted === undefined || wanted === index.kbTarget(inner, path) || NOT_IN_TARGET.test(wanted)) return whole;
    const heading = rest.startsWith('#') ? rest.slice(0, rest.includes('|') ? rest.indexOf('|') : undefined) : '';
    const label = rest.includes('|') ? rest.slice(rest.indexOf('|')) : bang === '' ? `|${target}` : '';
    links += 1;
    return `${bang}[[${index.relativeTarget(wanted, path)}${heading}${label}]]`;
  };
  for (let at = endLine ?? 0; at < lines.length; at += 1) {
    const line = lines[at] ?? '';
    const opened = FENCE.exec(line)?.[1];
    if (fence !== undefined) {
      if (opened !== undefined && opened[0] === fence[0] && opened.length >= fence.length && line.trim() === opened) fence = undefined;
      continue;
    }
    if (opened !== undefined) {
      fence = opened;
      continue;
    }
    if (!line.includes('[[')) continue;
    // Code spans are cut out, their text kept as it is, and the links between them rewritten.
    let out = '';
    let last = 0;
    for (const span of line.matchAll(CODE_SPAN)) {
      out += line.slice(last, span.index).replace(WIKI, relink) + span[0];
      last = span.index + span[0].length;
    }
    lines[at] = out + line.slice(last).replace(WIKI, relink);
  }
  return { text: links === 0 ? markdown : lines.join('\n'), links };
}
