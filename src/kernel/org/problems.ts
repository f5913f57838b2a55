import { KgwError } from '../errors.ts';

export interface OrgProblem {
  readonly line: number;
  readonly message: string;
}

/**
 * Every problem found in one org file. Reading and planning go on after a problem so that
 * the author sees all of them at once; nothing is applied while the list is not empty.
 */
export class OrgProblems {
  readonly fileName: string;
  readonly #list: OrgProblem[] = [];

  constructor(fileName: string) {
    this.fileName = fileName;
  }

  add(line: number, message: string): void {
    this.#list.push({ line, message });
  }

  /** A copy to add to, so a retried transaction does not report its planning problems twice. */
  fork(): OrgProblems {
    const copy = new OrgProblems(this.fileName);
    for (const problem of this.#list) copy.add(problem.line, problem.message);
    return copy;
  }

  get count(): number {
    return this.#list.length;
  }

  /** One validation error: a `<file>:<line>: <message>` line per problem, in file order. */
  toError(): KgwError {
    // Stable sort: problems on the same line keep the order in which they were found.
    const errors = [...this.#list].sort((a, b) => a.line - b.line);
    const message = errors.map((problem) => `${this.fileName}:${problem.line}: ${problem.message}`).join('\n');
    return new KgwError('validation', message, { details: { errors } });
  }
}

/** Quotes a value from the file for a message, cut short so one bad line stays one line. */
export function quote(value: unknown): string {
  const text = JSON.stringify(typeof value === 'string' ? value : String(value));
  return text.length > 80 ? `${text.slice(0, 76)}…"` : text;
}
