/** The bench's one order statistic: the value at rank ⌊p% · n⌋ of the sorted values (p50: the upper of two middles). */
export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

export const median = (values: number[]) => percentile(values, 50);
