#!/usr/bin/env node
import 'reflect-metadata';
import { runCli } from './commands.js';

process.exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
