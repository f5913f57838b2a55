import { isAlias, isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, visit } from 'yaml';
import type { Document, YAMLError } from 'yaml';
import type { OrgProblems } from './problems.ts';
import { quote } from './problems.ts';
import type { ValueRule } from './rules.ts';
import { unstorableText } from '../text.ts';

/** A node of the file with its line and its path (`people[0].email`), for messages. */
export interface Slot {
  readonly node: unknown;
  readonly line: number;
  readonly path: string;
}

/** A value read from the file, remembering where it was written. */
export interface Located<T = string> {
  readonly value: T;
  readonly line: number;
  readonly path: string;
}

/** The keys of one map of the file, each with its slot. */
export interface Fields {
  readonly line: number;
  get(key: string): Slot | undefined;
}

/**
 * Reads the nodes of one parsed YAML document. Each method checks one thing, reports what is
 * wrong with the line of the offending node, and returns undefined so the caller skips it.
 */
export class YamlReader {
  readonly problems: OrgProblems;
  readonly #doc: Document;
  readonly #lines: LineCounter;

  private constructor(doc: Document, lines: LineCounter, problems: OrgProblems) {
    this.#doc = doc;
    this.#lines = lines;
    this.problems = problems;
  }

  /**
   * Parses the source. Returns undefined when the YAML itself is broken; duplicate keys are
   * reported but reading goes on, because the rest of the document is still sound.
   */
  static parse(source: string, problems: OrgProblems): { reader: YamlReader; root: Slot } | undefined {
    const lines = new LineCounter();
    const doc = parseDocument(source, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
    const reader = new YamlReader(doc, lines, problems);
    // Unresolved tags and the like are warnings to the parser, but a config file should not guess.
    for (const error of [...doc.errors, ...doc.warnings]) problems.add(reader.#lineAt(error.pos[0]), reader.#describe(error));
    if (doc.errors.some((error) => error.code !== 'DUPLICATE_KEY')) return undefined;
    return { reader, root: { node: doc.contents, line: reader.lineOf(doc.contents, 1), path: '' } };
  }

  lineOf(node: unknown, fallback: number): number {
    return isNode(node) && node.range ? this.#lineAt(node.range[0]) : fallback;
  }

  fail(at: { readonly line: number }, message: string): void {
    this.problems.add(at.line, message);
  }

  /** A map whose keys must all be in `allowed`; `required` keys must be present. */
  fields(slot: Slot, allowed: readonly string[], required: readonly string[] = []): Fields | undefined {
    const node = this.#deref(slot.node);
    if (!isMap(node)) {
      this.fail(slot, `${name(slot)} must be a map, not ${kindOf(node)}`);
      return undefined;
    }
    const where = slot.path === '' ? 'at the top level' : `in ${slot.path}`;
    const found = new Map<string, Slot>();
    for (const pair of node.items) {
      const keyLine = this.lineOf(pair.key, slot.line);
      const key = isScalar(pair.key) ? pair.key.value : pair.key;
      if (typeof key !== 'string' || !allowed.includes(key)) {
        this.problems.add(keyLine, `unknown key ${quote(key)} ${where} (expected ${allowed.join(', ')})`);
        continue;
      }
      if (found.has(key)) continue; // the parser has reported the duplicate key already
      found.set(key, { node: pair.value, line: this.lineOf(pair.value, keyLine), path: childPath(slot.path, key) });
    }
    for (const key of required) {
      if (!found.has(key)) this.fail(slot, `${slot.path === '' ? 'the file' : slot.path} is missing the required key "${key}"`);
    }
    return { line: slot.line, get: (key) => found.get(key) };
  }

  /** A map with free keys (such as `email: role`), as key and value slots. */
  entries(slot: Slot): { key: Slot; value: Slot }[] | undefined {
    const node = this.#deref(slot.node);
    if (!isMap(node)) {
      this.fail(slot, `${name(slot)} must be a map, not ${kindOf(node)}`);
      return undefined;
    }
    const seen = new Set<string>();
    const entries: { key: Slot; value: Slot }[] = [];
    for (const pair of node.items) {
      const keyLine = this.lineOf(pair.key, slot.line);
      const key = isScalar(pair.key) ? String(pair.key.value) : '?';
      if (seen.has(key)) continue; // the parser has reported the duplicate key already
      seen.add(key);
      entries.push({
        key: { node: pair.key, line: keyLine, path: `${slot.path} key` },
        value: { node: pair.value, line: this.lineOf(pair.value, keyLine), path: childPath(slot.path, key) },
      });
    }
    return entries;
  }

  list(slot: Slot): Slot[] | undefined {
    const node = this.#deref(slot.node);
    if (!isSeq(node)) {
      this.fail(slot, `${name(slot)} must be a list, not ${kindOf(node)}`);
      return undefined;
    }
    return node.items.map((item, index) => ({ node: item, line: this.lineOf(item, slot.line), path: `${slot.path}[${index}]` }));
  }

  /** A text value that follows `rule`; returned in its stored (normalised) form. */
  string(slot: Slot, rule: ValueRule): Located | undefined {
    const node = this.#deref(slot.node);
    if (!isScalar(node) || typeof node.value !== 'string') {
      const hint = isScalar(node) && node.value !== null ? '; put it in quotes to make it text' : '';
      this.fail(slot, `${name(slot)} must be ${rule.expected}, not ${kindOf(node)}${hint}`);
      return undefined;
    }
    // YAML can spell "\0" and "\uD800": text the store cannot keep, refused like in the tools.
    const unstorable = unstorableText(node.value);
    if (unstorable !== undefined) {
      this.fail(slot, `${name(slot)} ${unstorable}`);
      return undefined;
    }
    if (!rule.valid(node.value)) {
      this.fail(slot, `${name(slot)}: ${quote(node.value)} is not ${rule.expected}`);
      return undefined;
    }
    return { value: rule.normalize ? rule.normalize(node.value) : node.value, line: slot.line, path: slot.path };
  }

  /** A value shown as it is written: text that follows `rule`, or a finite number (`Score: 4`). */
  textOrNumber(slot: Slot, rule: ValueRule): Located<string | number> | undefined {
    const node = this.#deref(slot.node);
    if (isScalar(node) && typeof node.value === 'number' && Number.isFinite(node.value)) return { value: node.value, line: slot.line, path: slot.path };
    return this.string(slot, rule);
  }

  /** The text under `key` of a map, if the slot is a map that has it, without reporting anything. */
  peekText(slot: Slot, key: string): string | undefined {
    const node = this.#deref(slot.node);
    if (!isMap(node)) return undefined;
    const value = this.#deref(node.get(key, true));
    return isScalar(value) && typeof value.value === 'string' ? value.value : undefined;
  }

  /** A YAML boolean (`true` or `false`; `yes` and `"true"` are text). */
  boolean(slot: Slot): Located<boolean> | undefined {
    const node = this.#deref(slot.node);
    if (!isScalar(node) || typeof node.value !== 'boolean') {
      this.fail(slot, `${name(slot)} must be true or false, not ${kindOf(node)}`);
      return undefined;
    }
    return { value: node.value, line: slot.line, path: slot.path };
  }

  /** True when the slot holds nothing (`people:` with no entries under it). */
  isEmpty(slot: Slot): boolean {
    const node = this.#deref(slot.node);
    return node === null || node === undefined || (isScalar(node) && node.value === null);
  }

  // An alias (*name) stands for the node it names; reading it reads that node.
  // An alias whose anchor is missing stays an alias, so the message can say so.
  #deref(node: unknown): unknown {
    return isAlias(node) ? (node.resolve(this.#doc) ?? node) : node;
  }

  #lineAt(offset: number): number {
    return this.#lines.linePos(offset).line;
  }

  #describe(error: YAMLError): string {
    if (error.code !== 'DUPLICATE_KEY') return `invalid YAML: ${error.message}`;
    let key: unknown;
    visit(this.#doc, {
      Pair: (_, pair) => {
        if (isScalar(pair.key) && pair.key.range?.[0] === error.pos[0]) key = pair.key.value;
      },
    });
    return key === undefined ? 'duplicate key' : `duplicate key ${quote(key)}`;
  }
}

function childPath(parent: string, key: string): string {
  const segment = /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : `[${JSON.stringify(key)}]`;
  if (parent === '') return segment;
  return segment.startsWith('[') ? `${parent}${segment}` : `${parent}.${segment}`;
}

function name(slot: Slot): string {
  return slot.path === '' ? 'the file' : slot.path;
}

function kindOf(node: unknown): string {
  if (isMap(node)) return 'a map';
  if (isSeq(node)) return 'a list';
  if (isAlias(node)) return `*${node.source}, an alias with no anchor of that name`;
  const value = isScalar(node) ? node.value : node;
  if (value === null || value === undefined) return 'empty';
  if (typeof value === 'string') return 'text';
  if (typeof value === 'number' || typeof value === 'bigint') return 'a number';
  if (typeof value === 'boolean') return 'true/false';
  return 'a value of another type';
}
