/**
 * What a bench made and must remove (its databases, folders, gateways, clients), as steps undone
 * last first. A run undoes them when it ends, and also when SIGINT or SIGTERM stops it (Ctrl-C,
 * a timeout): a database would otherwise stay on the server. Every step runs once, whichever
 * comes first; a step that fails is reported and the others still run.
 */
export class CleanUp {
  readonly #steps: (() => Promise<unknown>)[] = [];
  #all: Promise<void> | undefined;

  /** Adds a step, undone before the ones added earlier. */
  push(step: () => Promise<unknown>): void {
    this.#steps.push(step);
  }

  /** How many steps are held: a mark for `undoTo`. */
  get size(): number {
    return this.#steps.length;
  }

  /** Undoes the steps added since `mark`, last first (one run's of several). */
  async undoTo(mark: number): Promise<void> {
    while (this.#steps.length > mark) await this.#steps.pop()!().catch((error: unknown) => console.error('clean-up:', error));
  }

  /** Undoes every step; called again (by a signal and by the run it stopped), it waits for the first. */
  all(): Promise<void> {
    return (this.#all ??= this.undoTo(0));
  }

  /** On SIGINT or SIGTERM: says what is being removed, undoes every step and exits with 130 (128 + SIGINT's number, as shells report it). */
  onSignals(what: string): this {
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      process.once(signal, () => {
        console.error(`\n${signal}: ${what}`);
        void this.all().finally(() => process.exit(INTERRUPTED_EXIT));
      });
    return this;
  }
}

const INTERRUPTED_EXIT = 130;
