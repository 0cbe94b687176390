#!/usr/bin/env node
// The driver Pod's entry point (see driver/main.ts).
import { driverMain } from '../driver/main.ts';

process.exitCode = await driverMain();
