// Which chart a scalar series goes on, and the smoothing of step curves (no DOM: unit-tested in
// web/test/console_unit_test.mjs).

export const ROLES = ['train', 'training', 'valid', 'validation', 'val', 'eval', 'test'];

// Which chart a series goes on and its label there: a role prefix of the tag's last part
// ("train_loss"), a role as the last folder ("train/loss") or the run ("validation") names the
// series; the rest names the chart.
export function chartOf(run: string, tag: string): { chart: string; label: string } {
  const slash = tag.lastIndexOf('/');
  const dir = slash >= 0 ? tag.slice(0, slash) : '';
  const leaf = tag.slice(slash + 1);
  const prefixed = leaf.match(new RegExp(`^(${ROLES.join('|')})_(.+)$`));
  if (prefixed) return { chart: dir ? `${dir}/${prefixed[2]}` : prefixed[2], label: prefixed[1] };
  const parts = dir.split('/');
  if (dir && ROLES.includes(parts[parts.length - 1])) {
    const rest = parts.slice(0, -1).join('/');
    return { chart: rest ? `${rest}/${leaf}` : leaf, label: parts[parts.length - 1] };
  }
  if (run !== '.') return { chart: tag, label: run };
  return { chart: tag, label: leaf };
}

// TensorBoard's smoothing: an exponential moving average with weight `w`, debiased at the start;
// nulls (NaN, Inf) are kept and skipped.
export function smooth(values: (number | null)[], w: number): (number | null)[] {
  if (w <= 0) return values;
  let last = 0, n = 0;
  return values.map((v) => {
    if (v === null || !isFinite(v)) return v;
    last = last * w + (1 - w) * v;
    n++;
    return last / (1 - Math.pow(w, n));
  });
}
