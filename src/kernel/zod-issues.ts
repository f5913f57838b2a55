/**
 * Zod issues as text, for every place that tells a client what was wrong with its input. Kept
 * apart from zod itself (an issue is only its path and message), so that checks of our own that
 * report in the same shape (findUnstorable) read the same way.
 */

/**
 * What is wrong, and where: a zod issue, or one of ours shaped like it. A size issue of zod's
 * (`too_small`, `too_big`) also says what was measured and the bound, which issueLines words
 * itself.
 */
export interface Issue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly code?: string;
  /** What a size issue measured: `string`, `array`, `number`, …. */
  readonly origin?: string;
  readonly minimum?: number | bigint;
  readonly maximum?: number | bigint;
  readonly inclusive?: boolean;
  readonly exact?: boolean;
}

/**
 * How one issue reads:
 * - 'labelled', `names.1: must hold at least 1 item`, the message alone for the value as a
 *   whole: MCP tool arguments and request params.
 * - 'phrase', `names.1 must hold at least 1 item`: admin operations. The path is written even
 *   when empty, so an issue with the whole value starts with a space.
 */
export type IssueStyle = 'labelled' | 'phrase';

/** The issue's path, dotted: `env.A`, `names.1`; empty for the value as a whole. */
export function issuePath(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

/** What a string's and a list's sizes count. */
const UNITS: Readonly<Record<string, readonly [one: string, many: string]>> = {
  string: ['character', 'characters'],
  array: ['item', 'items'],
  set: ['item', 'items'],
  file: ['byte', 'bytes'],
};

const counted = (n: number, [one, many]: readonly [string, string]): string => `${n} ${n === 1 ? one : many}`;

/**
 * A size issue as one sentence in the field's terms — `must be at least 3 characters`,
 * `must not be empty`, `must hold at most 10 items`, `must be at least 1` — instead of zod's
 * `Too small: expected string to have >=3 characters`; undefined for any other issue.
 */
function sizeWording(issue: Issue): string | undefined {
  if (issue.code !== 'too_small' && issue.code !== 'too_big') return undefined;
  const small = issue.code === 'too_small';
  const raw = small ? issue.minimum : issue.maximum;
  if (raw === undefined) return undefined;
  const bound = Number(raw);
  const inclusive = issue.inclusive !== false;
  const unit = issue.origin === undefined ? undefined : UNITS[issue.origin];
  if (unit === undefined) {
    if (issue.exact === true) return `must be exactly ${bound}`;
    return `must be ${small ? (inclusive ? 'at least' : 'greater than') : inclusive ? 'at most' : 'less than'} ${bound}`;
  }
  const verb = unit[0] === 'character' ? 'must be' : 'must hold';
  if (issue.exact === true) return `${verb} exactly ${counted(bound, unit)}`;
  if (small && inclusive && bound === 1 && unit[0] === 'character') return 'must not be empty';
  if (inclusive) return `${verb} ${small ? 'at least' : 'at most'} ${counted(bound, unit)}`;
  // Exclusive bounds, which no schema of ours uses, said as what is allowed.
  return `${verb} ${small ? 'more' : 'fewer'} than ${counted(bound, unit)}`;
}

/**
 * What the issue says of its field: the size wording, or the message without the field's name
 * when the message starts with it (`title must …` under `title` would read `title: title must …`).
 */
function issueMessage(issue: Issue): string {
  const sized = sizeWording(issue);
  if (sized !== undefined) return sized;
  const field = issue.path.at(-1);
  const named = typeof field === 'string' && field !== '' ? `${field} ` : undefined;
  return named !== undefined && issue.message.startsWith(named) && issue.message.length > named.length ? issue.message.slice(named.length) : issue.message;
}

/**
 * Each issue as one line, one per field: a value that fails several checks (a title both under
 * zod's minimum and a refinement's) is told the first of them, once.
 */
export function issueLines(issues: readonly Issue[], style: IssueStyle): string[] {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const issue of issues) {
    const path = issuePath(issue.path);
    if (seen.has(path)) continue;
    seen.add(path);
    const message = issueMessage(issue);
    lines.push(style === 'phrase' ? `${path} ${message}` : issue.path.length ? `${path}: ${message}` : message);
  }
  return lines;
}

/** The issues on one line, separated by `; `; with `max`, only the first that many. */
export function issuesText(issues: readonly Issue[], style: IssueStyle, options: { max?: number } = {}): string {
  return issueLines(options.max === undefined ? issues : issues.slice(0, options.max), style).join('; ');
}
