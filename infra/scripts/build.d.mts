/** Types of build.mjs, a plain ES module so it runs without a TypeScript loader. */
export declare const ENTRIES: ReadonlyArray<readonly [entry: string, outfile: string]>;
export declare const HEAP_OPTIONS: string;
export declare function buildEntry(entry: string, outfile: string): Promise<void>;
export declare const PAGE_DIR: string;
export declare function buildPage(outdir?: string): Promise<void>;
