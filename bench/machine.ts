/** What every bench section records about where it ran. */
import { cpus, totalmem } from 'node:os';

/** Figures only mean something beside the machine they came from. */
export function machineInfo(): { cores: number; cpu: string; memoryGb: number; node: string } {
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  };
}
