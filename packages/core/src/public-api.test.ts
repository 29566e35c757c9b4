import { describe, expect, it } from 'vitest';
import { CORE_PUBLIC_NAMES as PUBLIC } from '../test/public-names.js';

describe('the public API of @dotasks/core', () => {
  it('exports exactly the names it promises', async () => {
    const api = await import('./index.js');
    expect(Object.keys(api).sort()).toEqual(PUBLIC);
  });

  it('the internal entry holds the public names too, as the same objects', async () => {
    const api: Record<string, unknown> = await import('./index.js');
    const internal: Record<string, unknown> = await import('./internal.js');
    for (const name of PUBLIC) expect(internal[name], name).toBe(api[name]);
  });

  it('the read and store entries stay subsets of the internal one', async () => {
    const internal: Record<string, unknown> = await import('./internal.js');
    for (const entry of [await import('./read.js'), await import('./store.js')])
      for (const [name, value] of Object.entries(entry)) expect(internal[name], name).toBe(value);
  });
});
