import { describe, expect, it } from 'vitest';
import { tasks } from '../helpers.js';
import { until } from '../../../core/test/git-remote.js';
import { machines, ok, useMachines } from '../machines-helpers.js';

/** Review on a board shared by two machines, as real processes of the built `tasks` and a real git remote. */

useMachines();

const show = (dir: string, id: number) => JSON.parse(tasks(dir, ['show', String(id), '--json']).stdout) as Record<string, unknown>;

describe('review across machines', () => {
  it("a task finished into review is not reaped when its published claim runs out on the other machine; the other machine's approval comes back", async () => {
    const [m1, m2] = await machines(2);
    ok(m1, ['create', 'Reviewed', '--review']);
    ok(m1, ['create', 'Abandoned']);
    ok(m1, ['sync']);
    ok(m2, ['sync']);
    // Both claims are published with a 2 s lease that nobody renews; #1 is finished into review (its claim dropped here).
    ok(m1, ['claim', '1', '--sync', '--lease', '2', '--owner', 'alice']);
    ok(m1, ['claim', '2', '--sync', '--lease', '2', '--owner', 'bob']);
    expect(ok(m1, ['done', '1', '--owner', 'alice'])).toContain('#1 waits for review');
    ok(m1, ['sync']);
    // m2 syncs until it reaps #2 (it saw bob's claim unrenewed for a whole lease): by then #1's would have run out too.
    await until(
      () => {
        tasks(m2, ['sync']);
        return show(m2, 2).status === 'pending';
      },
      { what: 'm2 to reap #2', ms: 60_000, every: 200 },
    );
    expect(show(m2, 1)).toMatchObject({ status: 'in_progress', owner: 'alice', review: { state: 'waiting' } });
    ok(m1, ['sync']);
    expect(show(m1, 1)).toMatchObject({ status: 'in_progress', review: { state: 'waiting' } });

    expect(ok(m2, ['approve', '1', '--owner', 'carol'])).toContain('approved #1');
    ok(m2, ['sync']);
    ok(m1, ['sync']);
    expect(show(m1, 1)).toMatchObject({ status: 'completed', review: { state: 'approved', by: 'carol' } });
  });
});
