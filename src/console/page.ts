import type { SafeHtml } from '../http/pages/html.ts';
import { html } from '../http/pages/html.ts';
import type { Lang } from './text.ts';
import { SHELL } from './text.ts';

/** Where the console lives under the public URL, and its static files. */
export const CONSOLE_PATH = '/console';

/** The signed-in frame around a page: who is signed in, the sections, sign-out. */
export interface Frame {
  readonly base: string;
  readonly lang: Lang;
  readonly person: { readonly name: string; readonly email: string };
  readonly tenantName: string;
  readonly csrf: string;
  /** The section the page belongs to (its nav entry is marked current): 'inbox' or a section's id. */
  readonly section: string;
  /** The sections the person sees, after the inbox, in order. */
  readonly sections: readonly { readonly id: string; readonly label: string }[];
}

/**
 * A console page: one stylesheet and one script from this gateway (the CSP allows nothing
 * else), a skip link, the navigation and the page's own body. Without the script every page
 * works; it only makes filters apply as they change. `scripts`: a section's own assets the page
 * loads too, as '<section id>/<name>'.
 */
export function consolePage(base: string, lang: Lang, title: string, body: SafeHtml, frame?: Frame, scripts: readonly string[] = []): string {
  const header =
    frame === undefined
      ? html`<header class="top"><a class="brand" href="${base}${CONSOLE_PATH}">${SHELL.brand[lang]} · ${SHELL.console[lang]}</a></header>`
      : html`<header class="top">
<a class="brand" href="${base}${CONSOLE_PATH}">${SHELL.brand[lang]} · ${SHELL.console[lang]}</a>
<nav aria-label="${SHELL.console[lang]}"><ul>
<li><a href="${base}${CONSOLE_PATH}/inbox"${frame.section === 'inbox' ? html` aria-current="page"` : ''}>${SHELL.inbox[lang]}</a></li>
${frame.sections.map(
  (section) =>
    html`<li><a href="${base}${CONSOLE_PATH}/${section.id}"${frame.section === section.id ? html` aria-current="page"` : ''}>${section.label}</a></li>`,
)}
</ul></nav>
<form class="who" method="post" action="${base}${CONSOLE_PATH}/signout">
<span>${SHELL.signedInAs[lang]} <strong>${frame.person.name}</strong> (${frame.person.email}) · ${frame.tenantName}</span>
<input type="hidden" name="csrf" value="${frame.csrf}">
<button type="submit" class="link">${SHELL.signOut[lang]}</button>
</form>
</header>`;
  return html`<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title} · ${SHELL.brand[lang]}</title>
<link rel="stylesheet" href="${base}${CONSOLE_PATH}/static/console.css">
<script src="${base}${CONSOLE_PATH}/static/console.js" defer></script>
${scripts.map(
  (script) => html`<script src="${base}${CONSOLE_PATH}/static/${script}" defer></script>
`,
)}</head>
<body>
<a class="skip" href="#main">${SHELL.skip[lang]}</a>
${header}
<main id="main" tabindex="-1">
${body}
</main>
</body>
</html>
`.value;
}
