/** Argument schemas shared by the analytics tools, so every tool describes them the same way. */
import { z } from 'zod';
import { DIMENSIONS, listInput, metadataSchema } from './analytics.ts';

export const days = z
  .number()
  .int()
  .optional()
  .describe('Exactly this many complete Pacific-time days ending yesterday (default 28).');
export const dimensions = listInput
  .optional()
  .describe(`Dimensions as an array or comma-separated string: ${DIMENSIONS.join(', ')} (default query).`);
export const dataState = z
  .string()
  .optional()
  .describe('all (fresh, partly incomplete), final, or hourly_all (with the hour dimension).');
export const searchType = z
  .string()
  .optional()
  .describe('web (default), image, video, news, discover, googleNews.');
/** The echo of the range a result covers. */
export const rangeShape = {
  site_url: z.string(),
  start_date: z.string(),
  end_date: z.string(),
  metadata: metadataSchema,
};

/** What a full query's result repeats of its request, ahead of its own fields. */
export const requestEchoShape = {
  ...rangeShape,
  dimensions: z.array(z.string()),
  search_type: z.string(),
  data_state: z.string(),
};

export function requestEcho(
  site: string,
  range: { start: string; end: string },
  echo: { dimensions: string[]; search_type: string; data_state: string },
) {
  return { site_url: site, start_date: range.start, end_date: range.end, ...echo };
}
