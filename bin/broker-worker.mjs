#!/usr/bin/env node
import { launch } from './launch.mjs';

await launch(
  'broker-worker/main',
  `usage: node bin/broker-worker.mjs   (npm run broker-worker)

Runs the broker worker: the process that owns every Kafka connection, reached by gateways
over IPC (BROKER_WORKER_LISTEN), configured by the BROKER_* settings.
Settings are environment variables: see docs/configuration.md. Exit codes: 0 stopped
cleanly, 1 failed to start (the log line says why), 2 usage error.`,
);
