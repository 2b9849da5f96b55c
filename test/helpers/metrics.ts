/** One scrape of a Prometheus endpoint, parsed. */
export interface Scrape {
  status: number;
  text: string;
  /** The value of the sample `name` whose labels are exactly `labels`; undefined when absent. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** Whether any sample of `name` (any labels) is there. */
  has(name: string): boolean;
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** GETs a metrics endpoint (the text exposition format) and parses its samples. */
export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(url);
  const text = await response.text();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  const sameLabels = (a: Record<string, string>, b: Record<string, string>) =>
    Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);
  return {
    status: response.status,
    text,
    value: (name, labels = {}) =>
      samples.find((sample) => sample.name === name && sameLabels(sample.labels, labels))?.value,
    has: (name) => samples.some((sample) => sample.name === name),
  };
}
