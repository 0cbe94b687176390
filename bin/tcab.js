#!/usr/bin/env -S node --max-semi-space-size=16
// The package has no build step: Node >= 24 runs the TypeScript sources directly (type stripping).
import { main } from '../cli/main.ts';

process.exitCode = await main(process.argv.slice(2));
