#!/usr/bin/env node
import { launch } from './launch.mjs';

await launch(
  'scripts/start',
  `usage: node bin/start.mjs   (npm start)

Runs a broker worker and a gateway together, restarting the worker if it dies and draining
both on SIGTERM. In production the Procfile or PM2 starts the two processes directly.
Settings are environment variables: see docs/configuration.md. Exit codes: 0 stopped
cleanly, 1 failed to start (the log line says why), 2 usage error.`,
);
