#!/usr/bin/env node
import { launch } from './launch.mjs';

await launch(
  'gateway/main',
  `usage: node bin/gateway.mjs   (npm run gateway)

Runs the MCP gateway: one HTTP listener (HOST, PORT) serving /{namespace}/mcp for the
event, memory, skills, gsc and producthunt namespaces, and the console at /console. The
event tools reach a broker worker (BROKER_WORKERS); the others need none.
Settings are environment variables: see docs/configuration.md. Exit codes: 0 stopped
cleanly, 1 failed to start (the log line says why), 2 usage error.`,
);
