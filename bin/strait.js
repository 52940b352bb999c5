#!/usr/bin/env node
import { runCli } from '../dist/src/cli/main.js';

runCli();
