import type { SafeHtml } from '../http/pages/html.ts';
import { html } from '../http/pages/html.ts';
import { validation } from '../kernel/errors.ts';
import { visibleText } from '../kernel/text.ts';
import type { Lang } from './text.ts';
import { SHELL, count, fill, when } from './text.ts';

/**
 * Pieces the products' console pages share. Every value goes through `html`, which escapes it:
 * what an agent wrote is shown as text, never as markup; and its control characters and bidi
 * overrides are shown in their escaped form (kernel/text.ts), so it cannot hide or reorder.
 */

/** What an agent or person wrote, in one line, with controls and bidi overrides visible: `html` escapes markup, not those. */
export const readable = (text: string): string => visibleText(text, { inline: true });

/** An instant for a page: written as the language writes it, with the exact time for machines and screen readers' tools. */
export const timeView = (lang: Lang, at: Date): SafeHtml => html`<time datetime="${at.toISOString()}">${when(lang, at)}</time>`;

/** A list's page from `?page=` (1 when left out); anything but a whole number from 1 to `max` is refused. */
export function pageOf(query: URLSearchParams, max: number): number {
  const text = query.get('page');
  if (text === null || text === '') return 1;
  const page = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(page) || page < 1 || page > max) throw validation(`page must be a whole number from 1 to ${max}`);
  return page;
}

/**
 * The links between a list's pages, or nothing when it has one. `pages`: how many there are,
 * where the list knows (it is counted); otherwise `more` says whether a next page exists.
 */
export function pager(
  lang: Lang,
  at: { readonly page: number; readonly more: boolean; readonly pages?: number },
  link: (page: number) => string,
): SafeHtml | string {
  if (at.page === 1 && !at.more) return '';
  const where = at.pages === undefined ? fill(SHELL.pageOf[lang], { page: count(lang, at.page) }) : `${count(lang, at.page)} / ${count(lang, at.pages)}`;
  return html`<nav class="pager" aria-label="${SHELL.pages[lang]}">
${at.page > 1 ? html`<a rel="prev" href="${link(at.page - 1)}">${SHELL.previous[lang]}</a>` : ''}
<span>${where}</span>
${at.more ? html`<a rel="next" href="${link(at.page + 1)}">${SHELL.next[lang]}</a>` : ''}
</nav>`;
}

/** Lines of a diff or a text shown at most; the rest is cut and said (README, Hardening). */
export const SHOWN_LINES_MAX = 5000;

function cut(lines: readonly string[]): { lines: readonly string[]; more: number } {
  return lines.length > SHOWN_LINES_MAX ? { lines: lines.slice(0, SHOWN_LINES_MAX), more: lines.length - SHOWN_LINES_MAX } : { lines, more: 0 };
}

const moreLines = (more: number): SafeHtml | string => (more === 0 ? '' : html`<p class="note">… ${String(more)} more lines not shown.</p>`);

/** A unified diff, each added and removed line marked (and announced as such, not by colour alone). */
export function diffView(unified: string, label: string): SafeHtml {
  const { lines, more } = cut(visibleText(unified).replace(/\n$/, '').split('\n'));
  const line = (text: string): SafeHtml => {
    if (text.startsWith('+++') || text.startsWith('---')) return html`<span class="hunk">${text}</span>`;
    if (text.startsWith('@@')) return html`<span class="hunk">${text}</span>`;
    if (text.startsWith('+')) return html`<ins class="add">${text}</ins>`;
    if (text.startsWith('-')) return html`<del class="del">${text}</del>`;
    return html`<span>${text}</span>\n`;
  };
  return html`<pre class="diff" aria-label="${label}">${lines.map(line)}</pre>${moreLines(more)}`;
}

/** A text as it is, in a block. */
export function textView(text: string, label: string): SafeHtml {
  const { lines, more } = cut(visibleText(text).split('\n'));
  return html`<pre aria-label="${label}">${lines.join('\n')}</pre>${moreLines(more)}`;
}

/** Fields now and after, the changed ones marked. */
export function compareView(
  caption: string,
  heads: { readonly field: string; readonly now: string; readonly after: string },
  rows: readonly { readonly field: string; readonly now: string | null; readonly after: string | null }[],
): SafeHtml {
  return html`<div class="scroll"><table class="compare">
<caption class="note">${caption}</caption>
<thead><tr><th scope="col">${heads.field}</th><th scope="col">${heads.now}</th><th scope="col">${heads.after}</th></tr></thead>
<tbody>${rows.map(
    (row) =>
      html`<tr${row.now !== row.after ? html` class="changed"` : ''}><th scope="row">${row.field}</th><td>${row.now ?? '—'}</td><td>${row.after ?? '—'}</td></tr>`,
  )}</tbody>
</table></div>`;
}
