#!/usr/bin/env -S node --max-semi-space-size=16
// --max-semi-space-size=16: a translating driver makes a steady stream of short-lived objects; a capped young
// generation keeps peak RSS near 120 MB on a 1 GB stream (default sizing: ~220 MB). See `npm run bench`.
// The driver Pod's entry point (see driver/main.ts).
import { driverMain } from '../driver/main.ts';

process.exitCode = await driverMain();
