/**
 * Every generated table of the performance pages: its marker name, the result files it reads
 * (under bench/results/) and the command that wrote them when a file does not say so itself.
 * A table under prose about one dated run reads a dated copy (`<file>-<date>T<hhmm>.json`),
 * so a later bench run that rewrites the live file cannot change figures under that prose
 * (bench/results/README.md says where each copy came from). Tables meant to follow the next
 * run read the live file (memory quality, tools agents call): a run that rewrites it fails
 * the doc's test until the report is run and the prose reread.
 */
import { eventClusterTable } from './event.ts';
import { consumeTable, fullRunTable, provenanceTable, targetsTable } from './gateway.ts';
import { memoryFullTable, memoryHeadlineTable, memoryPgLoadTable, memoryScaleTable } from './memory.ts';
import { memoryQualityTable } from './memory-quality.ts';
import { embeddersTable, footprintFloorsTable, footprintTable, opsTable } from './ops-footprint.ts';
import type { ResultFile } from './source.ts';
import { outputWritersTable, toolCallsTable } from './tool-calls.ts';

export interface TableSpec {
  name: string;
  sources: string[];
  command: string;
  render(files: ResultFile[]): string;
}

export const TABLES: TableSpec[] = [
  {
    name: 'targets-2026-11-26',
    sources: ['latest-2026-11-26T1135.json', 'memory-2026-11-26T1142.json'],
    command: 'npm run bench',
    render: targetsTable,
  },
  {
    name: 'memory-2026-11-26T1510',
    sources: ['memory-2026-11-26T1510.json'],
    command: 'npm run bench -- memory',
    render: memoryHeadlineTable({ writes: ['local', 'minilm'], keys: [1, 10], rps: false }),
  },
  {
    name: 'memory-2026-11-26T1745',
    sources: ['memory-2026-11-26T1745.json'],
    command: 'npm run bench -- memory',
    render: memoryHeadlineTable({
      writes: ['minilm', 'local', 'none'],
      keys: [1, 10],
      rps: true,
      postgres: true,
    }),
  },
  {
    name: 'event-cluster-2026-11-29T0706',
    sources: ['event-2026-11-29T0706.json'],
    command: 'npm run bench -- event',
    render: eventClusterTable,
  },
  {
    name: 'full-run-2026-11-22',
    sources: ['latest-2026-11-22T0347.json'],
    command: 'npm run bench',
    render: fullRunTable,
  },
  {
    name: 'provenance-2026-11-26',
    sources: ['latest-2026-11-26T1135.json'],
    command: 'npm run bench',
    render: provenanceTable,
  },
  {
    name: 'tool-calls',
    sources: ['tool-calls.json'],
    command: 'npm run bench -- tools',
    render: toolCallsTable,
  },
  {
    name: 'tool-calls-2026-11-29T0455',
    sources: ['tool-calls-2026-11-29T0455.json'],
    command: 'npm run bench -- tools --quick',
    render: toolCallsTable,
  },
  {
    name: 'output-writers-2026-11-29T0455',
    sources: ['tool-calls-2026-11-29T0455.json'],
    command: 'npm run bench -- tools --quick',
    render: outputWritersTable,
  },
  {
    name: 'consume',
    sources: ['consume-2026-11-23T1744.json'],
    command: 'npm run bench -- consume',
    render: consumeTable,
  },
  {
    name: 'ops-2026-11-26T0844',
    sources: ['ops-2026-11-26T0844.json'],
    command: 'npm run bench -- ops',
    render: opsTable,
  },
  { name: 'ops', sources: ['ops-2026-11-26T1131.json'], command: 'npm run bench', render: opsTable },
  {
    name: 'footprint-floors-2026-11-29',
    sources: ['footprint-2026-11-29T0726.json'],
    command: 'npm run bench -- footprint',
    render: footprintFloorsTable,
  },
  {
    name: 'footprint-floors-2026-11-29-before',
    sources: ['footprint-2026-11-29T0734-before-0190.json'],
    command: 'npm run bench -- footprint',
    render: footprintFloorsTable,
  },
  {
    name: 'footprint-floors',
    sources: ['footprint-2026-11-26T1733.json'],
    command: 'npm run bench -- footprint',
    render: footprintFloorsTable,
  },
  {
    name: 'footprint-2026-11-26T0859',
    sources: ['footprint-2026-11-26T0859.json', 'footprint-2026-11-26T0533.json'],
    command: 'npm run bench -- footprint',
    render: footprintTable,
  },
  {
    name: 'memory-2026-11-23',
    sources: ['memory-2026-11-23T2007.json'],
    command: 'npm run bench -- memory',
    render: memoryFullTable,
  },
  {
    name: 'memory-scale-2026-11-29T0738',
    sources: ['memory-2026-11-29T0738.json'],
    command: 'npm run bench -- memory',
    render: memoryScaleTable,
  },
  {
    name: 'memory-pg-load-2026-11-29T0738',
    sources: ['memory-2026-11-29T0738.json'],
    command: 'npm run bench -- memory',
    render: memoryPgLoadTable,
  },
  {
    name: 'memory-scale-2026-11-29T1530',
    sources: ['memory-2026-11-29T1530.json'],
    command: 'npm run bench',
    render: memoryScaleTable,
  },
  {
    name: 'memory-pg-load-2026-11-29T1530',
    sources: ['memory-2026-11-29T1530.json'],
    command: 'npm run bench',
    render: memoryPgLoadTable,
  },
  {
    name: 'memory-quality-minilm',
    sources: ['memory-quality-minilm.json'],
    command: 'npm run bench -- memory-quality --embedder minilm',
    render: memoryQualityTable,
  },
  {
    name: 'memory-quality-minilm-undated',
    sources: ['memory-quality-minilm-undated.json'],
    command: 'MEMORY_QUALITY_TIMES=undated npm run bench -- memory-quality --embedder minilm',
    render: memoryQualityTable,
  },
  {
    name: 'memory-quality-local',
    sources: ['memory-quality.json'],
    command: 'npm run bench -- memory-quality',
    render: memoryQualityTable,
  },
  {
    name: 'embedders',
    sources: ['embedders-2026-11-25T0413.json'],
    command: 'npm run bench -- embedders',
    render: embeddersTable,
  },
];
