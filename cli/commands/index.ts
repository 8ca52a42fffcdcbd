/** Every command the CLI offers, in the order `olmpub --help` lists them. Only working commands belong here. */
import type { Command } from '../command.js';
import { BUNDLE_COMMANDS } from './bundle.js';
import { CATALOG_COMMANDS } from './catalog.js';
import { CRD_COMMANDS } from './crd.js';
import { EXTENSION_COMMANDS } from './extension.js';
import { IMAGE_COMMANDS } from './image.js';
import { OPERATOR_IMAGE_COMMANDS } from './operator-image.js';
import { OPERATOR_COMMANDS } from './operator.js';
import { PUBLISH_COMMANDS } from './publish.js';
import { RBAC_COMMANDS } from './rbac.js';

export const COMMANDS: Command[] = [
  ...PUBLISH_COMMANDS,
  ...OPERATOR_COMMANDS,
  ...IMAGE_COMMANDS,
  ...OPERATOR_IMAGE_COMMANDS,
  ...BUNDLE_COMMANDS,
  ...CRD_COMMANDS,
  ...RBAC_COMMANDS,
  ...CATALOG_COMMANDS,
  ...EXTENSION_COMMANDS,
];
