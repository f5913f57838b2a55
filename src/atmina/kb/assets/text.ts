/*
 * Text as a Companion holds it: storable (PostgreSQL text takes no U+0000, UTF-8 no lone
 * surrogate), without the control characters a damaged font's encoding yields, with tidy
 * whitespace for search and snippets, and within a byte budget that is cut only between
 * characters.
 */

/** C0 controls other than tab and line feed, and DEL: never meaningful in extracted text. */
// eslint-disable-next-line no-control-regex
const STRAY_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/**
 * One page's extracted text made storable and tidy: carriage returns become line feeds, stray
 * controls go, lone surrogates become U+FFFD, runs of spaces become one, spaces at line ends go
 * and at most one blank line remains.
 */
export function tidyText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(STRAY_CONTROLS, '')
    .toWellFormed()
    .replace(/[^\S\n]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Text gathered piece by piece up to `maxBytes` of UTF-8; what does not fit is dropped and marks it truncated. */
export interface BoundedText {
  /** Adds a piece, or as much of it as fits; false once the budget is spent. */
  add(piece: string): boolean;
  readonly text: string;
  readonly bytes: number;
  readonly truncated: boolean;
}

export function boundedText(maxBytes: number): BoundedText {
  const pieces: string[] = [];
  let bytes = 0;
  let truncated = false;
  const encoder = new TextEncoder();
  return {
    add(piece) {
      if (truncated) return false;
      const size = Buffer.byteLength(piece, 'utf8');
      if (bytes + size <= maxBytes) {
        pieces.push(piece);
        bytes += size;
        return true;
      }
      // encodeInto writes whole characters only, so the cut never splits one.
      const { read, written } = encoder.encodeInto(piece, new Uint8Array(maxBytes - bytes));
      pieces.push(piece.slice(0, read));
      bytes += written;
      truncated = true;
      return false;
    },
    get text() {
      return pieces.join('');
    },
    get bytes() {
      return bytes;
    },
    get truncated() {
      return truncated;
    },
  };
}
