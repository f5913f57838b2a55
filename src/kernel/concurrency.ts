/**
 * `work` over every item, at most `inFlight` at a time, answers in the items' order. The first
 * failure rejects the whole (items not yet started are not started).
 */
export async function mapInParallel<T, R>(items: readonly T[], inFlight: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        out[index] = await work(items[index]!, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(inFlight, items.length)) }, lane));
  return out;
}
