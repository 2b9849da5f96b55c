// Preloaded (`node --import tsx --import ./test/watch-modules.mjs …`) by tests that check which
// packages a process loads: registers the hooks of watch-modules-hooks.mjs (see there).
import { register } from 'node:module';

register('./watch-modules-hooks.mjs', import.meta.url);
