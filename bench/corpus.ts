/**
 * The generated markdown corpus of `npm run bench:search`: deterministic for a seed and a
 * size, so two runs (and two commits) search the same files. Words follow a Zipf-like law
 * over a generated vocabulary (a few words are everywhere, most are rare, as in real notes);
 * each file has front matter with a title and tags, headings, paragraphs, and wiki and
 * markdown links to other files (a few to files that do not exist), so the graph projection
 * has references to resolve.
 */

/** Words in the vocabulary: enough that rare words stay rare at 100 k files. */
export const VOCABULARY_SIZE = 20_000;
/** The Zipf exponent of word frequencies; natural text is close to 1. */
const ZIPF_EXPONENT = 1.05;
/** Files per folder: paths look like notes/f0042/n004217.md. */
export const FILES_PER_FOLDER = 100;
/** Tags a file may carry, drawn from the most frequent vocabulary words after the first 50. */
const TAG_POOL = 200;
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'an', 'el', 'or', 'us', 'ip', 'ba', 'de', 'fu', 'go', 'hi', 'ju'];
/** Filler words of questions: what an agent wraps around the words that matter. */
const QUESTION_FRAMES = [
  'how does the {0} relate to {1} and {2}',
  'what is known about {0} when {1} meets {2} in the {3}',
  'where do we describe the {0} of {1} for the {2} team',
  'why did the {0} change after the {1} and {2} review',
  'which notes explain {0} {1} together with {2} and {3}',
  'what should I read first about {0} and the {1} of {2}',
] as const;

/** A small, fast, seedable PRNG (mulberry32): the same seed gives the same corpus everywhere. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The n-th vocabulary word: a pronounceable string of syllables, unique per n. */
export function word(n: number): string {
  let value = n;
  let out = '';
  do {
    out += SYLLABLES[value % SYLLABLES.length];
    value = Math.floor(value / SYLLABLES.length);
  } while (value > 0);
  // Two syllables at least, so no word is a common English stop word.
  return out.length < 4 ? `${out}x` : out;
}

export interface Vocabulary {
  /** A word index drawn with Zipf weights (0 is the most frequent). */
  draw(random: () => number): number;
}

/** Zipf sampling over VOCABULARY_SIZE words by binary search on the cumulative weights. */
export function zipfVocabulary(size = VOCABULARY_SIZE): Vocabulary {
  const cumulative = new Float64Array(size);
  let total = 0;
  for (let i = 0; i < size; i += 1) {
    total += 1 / (i + 1) ** ZIPF_EXPONENT;
    cumulative[i] = total;
  }
  return {
    draw(random) {
      const target = random() * total;
      let low = 0;
      let high = size - 1;
      while (low < high) {
        const mid = (low + high) >>> 1;
        if (cumulative[mid]! < target) low = mid + 1;
        else high = mid;
      }
      return low;
    },
  };
}

/** The path of file `n` (0-based). */
export function filePath(n: number): string {
  const folder = String(Math.floor(n / FILES_PER_FOLDER)).padStart(4, '0');
  return `notes/f${folder}/n${String(n).padStart(6, '0')}.md`;
}

/** The wiki name of file `n`: its file name without the extension, unique in the KB. */
const wikiName = (n: number): string => `n${String(n).padStart(6, '0')}`;

export interface CorpusFile {
  readonly path: string;
  readonly content: string;
  /** Distinct references this file holds (wiki and markdown), resolved or not: a target named twice is one reference. */
  readonly links: number;
}

export interface Corpus {
  readonly files: number;
  readonly seed: number;
  /** File `n` (0 ≤ n < files); the same n always gives the same file. */
  file(n: number): CorpusFile;
  /** `count` keyword queries of 1 to 3 words, from mid-frequency words (neither everywhere nor nowhere). */
  keywordQueries(count: number): string[];
  /** `count` natural-language questions of 6 to 12 words around 2 to 4 words of the vocabulary. */
  questions(count: number): string[];
}

const capitalise = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** A generated corpus of `files` markdown files; `seed` picks one of many. */
export function generateCorpus(files: number, seed = 13): Corpus {
  const vocabulary = zipfVocabulary();
  const words = (random: () => number, count: number): string[] => Array.from({ length: count }, () => word(vocabulary.draw(random)));
  // A word of middling frequency: ranks 50 to 5,000, so queries match some files but not all.
  const midWord = (random: () => number): string => word(50 + Math.floor(random() * random() * 4950));
  const sentence = (random: () => number): string => `${capitalise(words(random, 6 + Math.floor(random() * 14)).join(' '))}.`;
  const otherFile = (random: () => number, self: number): number => {
    // Mostly nearby files (notes link to their neighbours), sometimes anywhere.
    const near = random() < 0.7;
    const target = near ? self + Math.floor((random() - 0.5) * 2 * FILES_PER_FOLDER) : Math.floor(random() * files);
    return Math.min(files - 1, Math.max(0, target === self ? self + 1 : target));
  };

  return {
    files,
    seed,
    file(n) {
      const random = prng(seed * 1_000_003 + n);
      const title = capitalise(words(random, 2 + Math.floor(random() * 4)).join(' '));
      const tags = Array.from(new Set(Array.from({ length: 1 + Math.floor(random() * 3) }, () => word(50 + Math.floor(random() * TAG_POOL)))));
      const lines = ['---', `title: ${title}`, `tags: [${tags.join(', ')}]`, '---', '', `# ${title}`, ''];
      const targets = new Set<string>();
      const sections = 1 + Math.floor(random() * 4);
      for (let s = 0; s < sections; s += 1) {
        lines.push(`## ${capitalise(words(random, 1 + Math.floor(random() * 3)).join(' '))}`, '');
        const paragraphs = 1 + Math.floor(random() * 3);
        for (let p = 0; p < paragraphs; p += 1) {
          const sentences = Array.from({ length: 2 + Math.floor(random() * 4) }, () => sentence(random));
          // About one paragraph in two links somewhere: a wiki link, a markdown link, or a dead one.
          const roll = random();
          if (roll < 0.25) {
            const target = wikiName(otherFile(random, n));
            sentences.push(`See [[${target}]].`);
            targets.add(target);
          } else if (roll < 0.45) {
            const target = `/${filePath(otherFile(random, n))}`;
            sentences.push(`Compare [${midWord(random)}](${target}).`);
            targets.add(target);
          } else if (roll < 0.5) {
            const target = wikiName(files + n);
            sentences.push(`Missing: [[${target}]].`);
            targets.add(target);
          }
          lines.push(sentences.join(' '), '');
        }
      }
      return { path: filePath(n), content: lines.join('\n'), links: targets.size };
    },
    keywordQueries(count) {
      const random = prng(seed * 7 + 1);
      return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(random() * 3) }, () => midWord(random)).join(' '));
    },
    questions(count) {
      const random = prng(seed * 7 + 2);
      return Array.from({ length: count }, () => {
        const frame = QUESTION_FRAMES[Math.floor(random() * QUESTION_FRAMES.length)]!;
        return frame.replace(/\{(\d)\}/g, () => midWord(random));
      });
    },
  };
}
