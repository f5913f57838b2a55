/** Markup that is already safe: built by `html`, never from unescaped input. */
export class SafeHtml {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (typeof value === 'string') return escapeHtml(value);
  if (typeof value === 'number') return String(value);
  // Anything else in a page is a mistake: show nothing rather than "[object Object]".
  return '';
}

/** A template tag that escapes every interpolated value (in text and in quoted attributes). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => (out += render(value) + (strings[i + 1] ?? '')));
  return new SafeHtml(out);
}

/** The frame of every page: no script, one stylesheet from this gateway. */
export function layout(publicUrl: string, title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title} · Knowledge Gateway</title>
<link rel="stylesheet" href="${publicUrl}/oauth/static/oauth.css">
</head>
<body>
<main class="card">
<p class="brand">Knowledge Gateway</p>
${body}
</main>
</body>
</html>
`.value;
}

/** Hidden form fields carrying values through a form. */
export const hiddenFields = (fields: Readonly<Record<string, string | undefined>>): SafeHtml[] =>
  Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
