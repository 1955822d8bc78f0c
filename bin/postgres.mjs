#!/usr/bin/env node
import { launch } from './launch.mjs';

await launch('dev/postgres/cli');
