/**
 * Text the Knowledge-Base text modules hand out (headings, titles, tags, keys, labels) comes from
 * files anyone with write access can fill: it is made safe to show and bounded here, once.
 */

/** C0 and C1 controls and DEL (tabs and line breaks included: shown text is one line). */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/** The bidirectional formatting characters, which can reorder or hide what a person reads. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const WHITESPACE_RUN = /\s+/g;

/**
 * `raw` as one line of at most `max` code points: lone surrogates become U+FFFD, controls become
 * spaces, bidirectional formatting characters are removed, whitespace runs become one space, and
 * the ends are trimmed. Text cut at the bound ends with an ellipsis (counted in `max`).
 */
export function displayText(raw: string, max: number): string {
  const text = raw.toWellFormed().replace(CONTROLS, ' ').replace(BIDI_CONTROLS, '').replace(WHITESPACE_RUN, ' ').trim();
  return clip(text, max);
}

/** `text` cut to at most `max` code points (never inside a surrogate pair), an ellipsis marking the cut. */
export function clip(text: string, max: number): string {
  // A string of n UTF-16 units holds at most n code points, so a short one needs no count.
  if (text.length <= max) return text;
  let points = 0;
  let at = 0;
  while (at < text.length) {
    if (points === max) return max === 0 ? '' : `${cutBefore(text, max - 1)}…`;
    const unit = text.charCodeAt(at);
    at += unit >= 0xd800 && unit <= 0xdbff && at + 1 < text.length ? 2 : 1;
    points += 1;
  }
  return text;
}

/** The first `points` code points of `text`. */
function cutBefore(text: string, points: number): string {
  let at = 0;
  for (let seen = 0; seen < points && at < text.length; seen += 1) {
    const unit = text.charCodeAt(at);
    at += unit >= 0xd800 && unit <= 0xdbff && at + 1 < text.length ? 2 : 1;
  }
  return text.slice(0, at).trimEnd();
}

/** The lines of `text`: CRLF, CR and LF each end one (CommonMark's line endings). */
export function splitLines(text: string): string[] {
  // Splitting at one character is several times faster, and most files have only LF.
  return text.includes('\r') ? text.split(LINE_ENDING) : text.split('\n');
}

const LINE_ENDING = /\r\n|\r|\n/;

/** `text` without a leading byte order mark, which editors on some systems write. */
export const withoutBom = (text: string): string => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
