import type { ESLint } from 'eslint';

export const CAPABILITIES: string[];
export const ENGINES: string[];
export const COMPOSITION: string[];
export const BASE: string;
export const layers: ESLint.Plugin;
