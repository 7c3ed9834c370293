// Types of build-current.js for the TypeScript tests (bin/ is plain JavaScript run without a build).
export declare const BUILD_INFO: string;
export declare const COMPILED_CLI: string;
export declare function buildIsCurrent(root: string): boolean;
