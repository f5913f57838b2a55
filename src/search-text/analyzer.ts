import { createRequire } from 'node:module';

/*
 * The text analysis both search engines share: the same words of a file and of a question must
 * become the same terms, whichever engine ranks them. Text is normalised (NFKC, lower case,
 * lone surrogates and control characters dropped), cut into words of letters, marks and
 * digits, stop words of the language dropped and the rest stemmed with the Snowball stemmer of
 * the tenant's language. Only English and German have stop lists; the other Snowball languages
 * stem without one, and a language Snowball does not know is only normalised.
 */

interface Stemmer {
  stem(word: string): string;
}
interface SnowballModule {
  algorithms(): string[];
  newStemmer(name: string): Stemmer;
}
// The package is CommonJS without types; its two functions are all this module uses.
const snowball = createRequire(import.meta.url)('snowball-stemmers') as SnowballModule;

/** Words longer than this are not terms (hashes, base64, minified code): at most 48 code points. */
export const TERM_MAX_CHARS = 48;

/**
 * Words kept per language with their terms, so a word is normalised and stemmed once however
 * often it is seen (indexing spent most of its time there). Words longer than
 * TERM_CACHE_WORD_MAX UTF-16 units are worked out each time, so the cache stays bounded in
 * bytes too (about 200,000 × 200 units at most).
 */
const TERM_CACHE_MAX = 200_000;
const TERM_CACHE_WORD_MAX = 4 * 48;

// A small stop list, as the textbook BM25 figure uses: words that carry no topic of their own.
// Question words are in it because agents ask questions ("what is known about ...").
const ENGLISH_STOP = `a an and are as at be been but by can could did do does for from had has have how i if in into is it
its may might must no nor not of on or our shall should so such than that the their them then there these they this those
to was we were what when where which while who whom why will with would you your`;

// The Snowball project's German stop list, less its rarer inflections.
const GERMAN_STOP = `aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes auch auf aus
bei bin bis bist da damit dann das dass dasselbe dazu dein deine deinem deinen deiner dem demselben den denn denselben der
derer derselbe derselben des desselben dessen dich die dies diese dieselbe dieselben diesem diesen dieser dieses dir doch
dort du durch ein eine einem einen einer eines einig einige einigem einigen einiger einiges einmal er es etwas euch euer
eure eurem euren eurer für gegen gewesen hab habe haben hat hatte hatten hier hin hinter ich ihm ihn ihnen ihr ihre ihrem
ihren ihrer im in indem ins ist jede jedem jeden jeder jedes jene jenem jenen jener jenes jetzt kann kein keine keinem
keinen keiner keines können könnte machen man manche manchem manchen mancher manches mein meine meinem meinen meiner mich
mir mit muss musste nach nicht nichts noch nun nur ob oder ohne sehr sein seine seinem seinen seiner seit sich sie sind so
solche solchem solchen solcher soll sollte sondern sonst um und uns unser unsere unter viel vom von vor war waren warst was
weg weil weiter welche welchem welchen welcher welches wenn werde werden wie wieder will wir wird wirst wo wollen wollte
während würde würden zu zum zur zwar zwischen`;

/** The stop words per analyser language (only English and German have a list). */
export const STOP_WORDS: Readonly<Record<string, ReadonlySet<string>>> = {
  english: new Set(ENGLISH_STOP.split(/\s+/)),
  german: new Set(GERMAN_STOP.split(/\s+/)),
};

// Snowball's algorithm per primary language subtag (BCP 47); 'porter' is the old English one.
const SNOWBALL_BY_TAG: Readonly<Record<string, string>> = {
  ar: 'arabic',
  hy: 'armenian',
  eu: 'basque',
  ca: 'catalan',
  cs: 'czech',
  da: 'danish',
  nl: 'dutch',
  en: 'english',
  fi: 'finnish',
  fr: 'french',
  de: 'german',
  hu: 'hungarian',
  it: 'italian',
  ga: 'irish',
  no: 'norwegian',
  nb: 'norwegian',
  nn: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  es: 'spanish',
  sl: 'slovene',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
};

/** The analyser's name for a tenant's language tag ("en", "de-AT"): a Snowball algorithm, or 'simple'. */
export function analyzerLanguage(tag: string): string {
  const primary = tag.split('-')[0]?.toLowerCase() ?? '';
  return SNOWBALL_BY_TAG[primary] ?? 'simple';
}

// A word: letters, combining marks and digits; an apostrophe or hyphen between them splits it.
const WORD = /[\p{L}\p{M}\p{N}]+/gu;
// Marks are folded away for the languages whose stemmer expects plain letters; German's handles ä, ö, ü and ß itself.
const KEEPS_MARKS: ReadonlySet<string> = new Set([
  'german',
  'french',
  'spanish',
  'portuguese',
  'italian',
  'catalan',
  'romanian',
  'hungarian',
  'czech',
  'slovene',
  'turkish',
  'finnish',
  'swedish',
  'norwegian',
  'danish',
  'arabic',
  'tamil',
  'armenian',
  'russian',
  'irish',
  'basque',
  'dutch',
]);
const MARKS = /\p{M}+/gu;
// Characters that are never part of a word and may hide one: controls, bidi controls, zero-width ones.
// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;

/** One word of a text: its term (stemmed), the surface form and where the surface form is. */
export interface Token {
  readonly term: string;
  /** Position among the text's words, counting stop words, so phrases keep their gaps. */
  readonly position: number;
  /** UTF-16 offsets of the word in the text as given (for snippets). */
  readonly start: number;
  readonly end: number;
}

export class Analyzer {
  readonly language: string;
  readonly #stemmer: Stemmer | undefined;
  readonly #stop: ReadonlySet<string>;
  readonly #foldMarks: boolean;
  /** Word as written → its term, or null for a stop word or a word too long to be one. */
  readonly #cache = new Map<string, string | null>();

  constructor(language: string) {
    this.language = snowball.algorithms().includes(language) ? language : 'simple';
    this.#stemmer = this.language === 'simple' ? undefined : snowball.newStemmer(this.language);
    this.#stop = STOP_WORDS[this.language] ?? new Set();
    this.#foldMarks = !KEEPS_MARKS.has(this.language);
  }

  /** The term of one word as written, or undefined for a stop word or a word too long to be one. */
  term(word: string): string | undefined {
    const cached = this.#cache.get(word);
    if (cached !== undefined) return cached ?? undefined;
    const term = this.#termOf(word);
    if (word.length <= TERM_CACHE_WORD_MAX) {
      if (this.#cache.size >= TERM_CACHE_MAX) this.#cache.clear();
      this.#cache.set(word, term ?? null);
    }
    return term;
  }

  #termOf(word: string): string | undefined {
    const lower = word.normalize('NFKC').toLowerCase();
    const folded = this.#foldMarks ? lower.normalize('NFD').replace(MARKS, '').normalize('NFC') : lower;
    if (folded.length === 0 || [...folded].length > TERM_MAX_CHARS || this.#stop.has(folded)) return undefined;
    return this.#stemmer === undefined ? folded : this.#stemmer.stem(folded) || folded;
  }

  /** The tokens of a text, in order; stop words count for positions but yield no token. */
  tokens(text: string): Token[] {
    return [...this.eachToken(text)];
  }

  /** The tokens of a text one by one, so a reader that has seen enough stops the work there. */
  *eachToken(text: string): Generator<Token> {
    // Both replacements keep the length, so offsets point into the text as given.
    const normal = text.toWellFormed().replace(INVISIBLE, ' ');
    let position = 0;
    for (const match of normal.matchAll(WORD)) {
      const term = this.term(match[0]);
      if (term !== undefined) yield { term, position, start: match.index, end: match.index + match[0].length };
      position++;
    }
  }

  /** Just the terms of a text, in order. */
  terms(text: string): string[] {
    return this.tokens(text).map((t) => t.term);
  }
}

const ANALYZERS = new Map<string, Analyzer>();

/** The shared analyser of a language (see analyzerLanguage). */
export function analyzer(language: string): Analyzer {
  let found = ANALYZERS.get(language);
  if (found === undefined) {
    found = new Analyzer(language);
    ANALYZERS.set(found.language, found);
    ANALYZERS.set(language, found);
  }
  return found;
}
