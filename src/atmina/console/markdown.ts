import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';
import { SafeHtml, escapeHtml } from '../../http/pages/html.ts';
import { visibleText } from '../../kernel/text.ts';

/**
 * A KB's Markdown as the console shows it: markdown-it with raw HTML off (an agent's `<script>`
 * or `<img onerror>` is text on the page), and every address checked and rewritten:
 *
 * - a link to another file of the KB (`../policies/leave.md`, `/index.md`) goes to the console's
 *   page of that file, a link to a folder (`guides/`) to its listing, `#part` stays in the page;
 * - http, https and mailto links stay, opening nothing in this window's context (rel noopener);
 * - any other scheme (`javascript:`, `data:`, `vbscript:`, `file:` …) is no link at all;
 * - an image of the KB is shown from its rendition (the console's route, never the original
 *   bytes); an image elsewhere becomes a link to it, as the CSP would block it anyway;
 * - no attribute but href, src, alt, title, rel, start and class: table alignment, which
 *   markdown-it writes as an inline style the CSP would refuse, is dropped.
 *
 * Control and bidi characters are shown escaped (kernel/text.ts), as everywhere in the console.
 */

/** Where the rendered page's links and images point: the console's addresses of the KB's files. */
export interface MarkdownTargets {
  /** The page of a KB file, by its path. */
  file(path: string): string;
  /** The listing of a KB folder, by its prefix ('' or ending in '/'). */
  folder(prefix: string): string;
  /** The rendition of an image of the KB, by its path. */
  image(path: string): string;
  /** The page of the file a wiki link (`[[Setup]]`, the inside as written) names, or undefined when no file answers it. */
  wiki(inner: string): string | undefined;
}

/** A wiki link's inside: one line, no brackets, as long as a reference's target may be. */
export const WIKI_LINK = /\[\[([^[\]\n]{1,1024})\]\]/g;

/** What a wiki link shows: its label after `|`, else what it names without its `#part`. */
const wikiLabel = (inner: string): string => {
  const bar = inner.indexOf('|');
  if (bar >= 0) return inner.slice(bar + 1).trim() || inner.slice(0, bar).trim();
  return inner.replace(/#.*$/s, '').trim() || inner.trim();
};

const KEPT_ATTRIBUTES = new Set(['href', 'src', 'alt', 'title', 'rel', 'start', 'class']);
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
const OUTSIDE_SCHEMES = new Set(['http', 'https', 'mailto']);

/**
 * The KB path a relative address means, read from the folder of the file that holds it: `..`
 * and `.` resolved, a leading `/` from the KB's root; undefined when it climbs above the root or
 * is not a decodable path. The query and fragment are left out.
 */
export function kbTarget(fromPath: string, address: string): { readonly path: string; readonly folder: boolean } | undefined {
  const bare = address.replace(/[?#].*$/s, '');
  if (bare === '') return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(bare);
  } catch {
    return undefined;
  }
  const parts = decoded.startsWith('/') ? [] : fromPath.split('/').slice(0, -1);
  for (const segment of decoded.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(segment);
  }
  const folder = decoded.endsWith('/') || decoded.endsWith('/.') || decoded.endsWith('/..') || decoded === '.' || decoded === '..';
  if (parts.length === 0) return folder ? { path: '', folder: true } : undefined;
  return { path: folder ? `${parts.join('/')}/` : parts.join('/'), folder };
}

function keepOnly(token: Token): void {
  if (token.attrs !== null) token.attrs = token.attrs.filter(([name]) => KEPT_ATTRIBUTES.has(name));
}

/** An address in the page: the console's for a KB file or folder, an outside one kept, or none. */
function rewrite(address: string, fromPath: string, targets: MarkdownTargets): { readonly href: string; readonly outside: boolean } | undefined {
  const trimmed = address.trim();
  if (trimmed.startsWith('#')) return { href: trimmed, outside: false };
  const scheme = SCHEME.exec(trimmed);
  if (scheme !== null) return OUTSIDE_SCHEMES.has((scheme[1] ?? '').toLowerCase()) ? { href: trimmed, outside: true } : undefined;
  // A scheme-relative address (//host/x) leaves the gateway: it is an outside link, and https.
  if (trimmed.startsWith('//')) return { href: `https:${trimmed}`, outside: true };
  const target = kbTarget(fromPath, trimmed);
  if (target === undefined) return undefined;
  return { href: target.folder ? targets.folder(target.path) : targets.file(target.path), outside: false };
}

/** The Markdown of the KB file at `path`, as safe HTML for the console. */
export function renderMarkdown(source: string, path: string, targets: MarkdownTargets): SafeHtml {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
  // Only the schemes rewrite() keeps, and relative addresses: the rest never become a link.
  md.validateLink = (url: string) => {
    const scheme = SCHEME.exec(url.trim());
    return scheme === null || OUTSIDE_SCHEMES.has((scheme[1] ?? '').toLowerCase());
  };
  // Wiki links (`[[Setup]]`, `[[guides/setup|the setup]]`), as Atmina reads them for `related`:
  // a link to the file that answers, or the label marked unresolved.
  md.inline.ruler.before('link', 'kb_wiki', (state, silent) => {
    if (state.src.charCodeAt(state.pos) !== 0x5b || state.src.charCodeAt(state.pos + 1) !== 0x5b) return false;
    WIKI_LINK.lastIndex = 0;
    const match = WIKI_LINK.exec(state.src.slice(state.pos));
    if (match === null || match.index !== 0) return false;
    const inner = match[1] ?? '';
    if (!silent) {
      const href = targets.wiki(inner);
      const open = state.push('link_open', href === undefined ? 'span' : 'a', 1);
      open.attrs = href === undefined ? [['class', 'unresolved']] : [['href', href]];
      open.meta = { wiki: true };
      state.push('text', '', 0).content = wikiLabel(inner);
      state.push('link_close', href === undefined ? 'span' : 'a', -1);
    }
    state.pos += match[0].length;
    return true;
  });
  md.core.ruler.push('kb_addresses', (state) => {
    const walk = (tokens: readonly Token[]) => {
      for (const token of tokens) {
        keepOnly(token);
        if (token.type === 'link_open' && (token.meta as { wiki?: boolean } | null)?.wiki === true) {
          // Already the console's address (or no link): nothing to rewrite.
        } else if (token.type === 'link_open') {
          const rewritten = rewrite(String(token.attrGet('href') ?? ''), path, targets);
          if (rewritten === undefined) {
            // Not a link any more: its text stays, as a span.
            token.tag = 'span';
            token.attrs = null;
            token.meta = { unlinked: true };
          } else {
            token.attrSet('href', rewritten.href);
            if (rewritten.outside) token.attrSet('rel', 'noopener noreferrer nofollow');
          }
        } else if (token.type === 'image') {
          const src = String(token.attrGet('src') ?? '');
          const rewritten = rewrite(src, path, targets);
          const target = rewritten === undefined || rewritten.outside ? undefined : kbTarget(path, src.trim());
          if (target !== undefined && !target.folder) token.attrSet('src', targets.image(target.path));
          else token.meta = { outside: rewritten?.outside === true ? rewritten.href : undefined };
        }
        if (token.children !== null) walk(token.children);
      }
    };
    walk(state.tokens);
    // The closing tag of a link that is no more must close the span it became.
    for (const token of state.tokens) {
      if (token.children === null) continue;
      const open: Token[] = [];
      for (const child of token.children) {
        if (child.type === 'link_open') open.push(child);
        else if (child.type === 'link_close') {
          const opener = open.pop();
          if (opener?.tag === 'span') child.tag = 'span';
        }
      }
    }
  });
  const image = md.renderer.rules.image;
  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    if (token === undefined) return '';
    const meta = token.meta as { outside?: string | undefined } | null;
    if (meta === null || !('outside' in meta)) return image === undefined ? self.renderToken(tokens, idx, options) : image(tokens, idx, options, env, self);
    // An image elsewhere is not loaded (the CSP would refuse it): its description links to it.
    const alt = self.renderInlineAsText(token.children ?? [], options, env);
    const label = alt === '' ? (meta.outside ?? '') : alt;
    return meta.outside === undefined
      ? `<span>${escapeHtml(label)}</span>`
      : `<a href="${escapeHtml(meta.outside)}" rel="noopener noreferrer nofollow">${escapeHtml(label)}</a>`;
  };
  const text = visibleText(source.replace(/\r\n?/g, '\n'));
  return new SafeHtml(`<div class="markdown">${md.render(text)}</div>`);
}
