/**
 * Which metrics and labels a PromQL expression (an alert rule, a dashboard query) reads, and
 * which series a Prometheus text scrape exposes, so a test can tell when a rule or a panel
 * names something the gateway does not serve: such a rule never fires and such a panel
 * stays empty, with no error anywhere. Enough of PromQL for selectors, matchers and grouping
 * clauses; functions and keywords are told apart from metric names by what follows them.
 */

/** A metric with the label names seen on its samples (a family with none still counts, label-less). */
export type Exposed = Map<string, Set<string>>;

/** Every sample line of a scrape: histograms appear as their _bucket (with `le`), _sum and _count. */
export function exposedSeries(text: string): Exposed {
  const exposed: Exposed = new Map();
  for (const line of text.split('\n')) {
    const declared = line.match(/^# TYPE ([a-zA-Z_:][\w:]*) (\w+)/);
    if (declared) {
      const [, name, type] = declared;
      const names = type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!];
      for (const one of names) if (!exposed.has(one)) exposed.set(one, new Set());
      continue;
    }
    const sample = line.match(/^([a-zA-Z_:][\w:]*)(\{(.*)\})?\s/);
    if (!sample) continue;
    const labels = exposed.get(sample[1]!) ?? new Set<string>();
    for (const pair of (sample[3] ?? '').matchAll(/([a-zA-Z_]\w*)="(?:[^"\\]|\\.)*"/g)) labels.add(pair[1]!);
    exposed.set(sample[1]!, labels);
  }
  return exposed;
}

export interface References {
  metrics: Set<string>;
  /** Labels in a selector's matchers, with the metric they belong to. */
  matchers: Array<{ metric: string; label: string }>;
  /** Labels in by/without/on/ignoring/group_* lists: each must be on some metric the expression reads. */
  grouping: Set<string>;
}

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'inf',
  'nan',
]);
const STRING = /"(?:[^"\\]|\\.)*"/g;

export function promqlReferences(expr: string): References {
  const refs: References = { metrics: new Set(), matchers: [], grouping: new Set() };
  // Range and subquery brackets hold durations ([5m], [$__rate_interval]), never a name.
  let rest = expr.replace(/\[[^\]]*\]/g, ' ');
  rest = rest.replace(
    /\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g,
    (_all, _kw, list) => {
      for (const label of String(list).split(',')) if (label.trim()) refs.grouping.add(label.trim());
      return ' ';
    },
  );
  rest = rest.replace(
    /([a-zA-Z_:][\w:]*)?\s*\{([^}]*)\}/g,
    (_all, metric: string | undefined, body: string) => {
      for (const matcher of body.matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"/g)) {
        refs.matchers.push({ metric: metric ?? '', label: matcher[1]! });
      }
      if (metric) refs.metrics.add(metric);
      return ' ';
    },
  );
  rest = rest.replace(STRING, ' ');
  // A name not directly after a digit or a dot (1h, 2.5e3), not a keyword and not a function call.
  for (const match of rest.matchAll(/(?<![\w.])([a-zA-Z_:][\w:]*)(?![\w:])(?!\s*\()/g)) {
    if (!KEYWORDS.has(match[1]!.toLowerCase())) refs.metrics.add(match[1]!);
  }
  return refs;
}

/**
 * Labels Prometheus adds to every series of a target when it scrapes it; no process exposes
 * them itself, and rules and dashboards may use them freely.
 */
export const TARGET_LABELS = new Set(['instance', 'job']);

/** Series Prometheus itself writes for every target (only `up` is used here): never in a scrape. */
export const SCRAPE_SERIES = new Set(['up']);

/** What an expression reads that the scrape does not expose, one line per problem (empty: all there). */
export function missingFrom(exposed: Exposed, expr: string, alsoLabels: Iterable<string> = []): string[] {
  const refs = promqlReferences(expr);
  const problems: string[] = [];
  for (const metric of refs.metrics)
    if (!exposed.has(metric) && !SCRAPE_SERIES.has(metric)) problems.push(`no metric ${metric}`);
  for (const { metric, label } of refs.matchers) {
    if (TARGET_LABELS.has(label) || label === '__name__') continue;
    if (metric && exposed.has(metric) && !exposed.get(metric)!.has(label))
      problems.push(`no label ${label} on ${metric}`);
  }
  for (const label of [...refs.grouping, ...alsoLabels]) {
    if (TARGET_LABELS.has(label)) continue;
    const onSome = [...refs.metrics].some((metric) => exposed.get(metric)?.has(label));
    if (!onSome) problems.push(`no label ${label} on any of ${[...refs.metrics].join(', ')}`);
  }
  return problems;
}
