import { displayText } from './clean.ts';
import { DESCRIPTION_MAX_CHARS, TITLE_MAX_CHARS } from './front-matter.ts';
import { normalKbPath } from './paths.ts';

/**
 * The pages a hub index or the navigation lists: each a KB path with the title and description
 * the caller found for it (summarisePage gives them from front matter or the first heading).
 */
export interface PageEntry {
  readonly path: string;
  readonly title?: string;
  readonly description?: string;
}

export interface Page {
  readonly path: string;
  /** The entry's title made displayable, else the file name without its extension. */
  readonly title: string;
  readonly description?: string;
}

/**
 * `entries` as pages: paths that are not KB paths in normal form are skipped, a repeated path
 * keeps its first entry, and the order is by path in code unit order (the same on every
 * machine, whatever its locale), so that equal inputs give equal files.
 */
export function sortedPages(entries: readonly PageEntry[], keep: (path: string) => boolean): Page[] {
  const byPath = new Map<string, Page>();
  for (const entry of entries) {
    const path = normalKbPath(entry.path);
    if (path === undefined || byPath.has(path) || !keep(path)) continue;
    const description = entry.description === undefined ? '' : displayText(entry.description, DESCRIPTION_MAX_CHARS);
    byPath.set(path, { path, title: pageTitle(path, entry.title), ...(description === '' ? {} : { description }) });
  }
  return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function pageTitle(path: string, title: string | undefined): string {
  const shown = title === undefined ? '' : displayText(title, TITLE_MAX_CHARS);
  if (shown !== '') return shown;
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return displayText(dot > 0 ? name.slice(0, dot) : name, TITLE_MAX_CHARS) || name;
}
