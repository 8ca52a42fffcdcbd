/** Every command the CLI offers, in the order `olmpub --help` lists them. Only working commands belong here. */
import type { Command } from '../command.js';

export const COMMANDS: Command[] = [];
