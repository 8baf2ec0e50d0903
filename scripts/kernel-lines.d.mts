/** Types of scripts/kernel-lines.mjs, for test/kernel/layout.test.ts. */
export declare const KERNEL_LINE_BAR: number;
export declare const LINE_WIDTH: number;
export declare function countCodeLines(text: string): number;
export declare function biomeFormat(file: string, text: string): string;
export declare function longLines(text: string): string[];
export interface KernelFileReport {
  file: string;
  lines: number;
  long: string[];
  formatted: boolean;
}
export declare function kernelReport(dir?: string): { files: KernelFileReport[]; total: number };
