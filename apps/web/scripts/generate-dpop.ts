import { writeFile } from 'node:fs/promises';
import { browserDpopModule, OUTPUT } from './browser-dpop.js';

await writeFile(OUTPUT, await browserDpopModule());
console.log(`wrote ${OUTPUT}`);
