import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../store.js';
import { ClaimError } from '../errors.js';
import { claimWithSync, syncBoard } from './sync.js';
import { SyncMemory } from './sync-memory.js';
import { gitAsync } from './git-locks.js';
import { pushClaimRefs, writeClaimCommits } from './claim-refs.js';
import { createRemote, git, onBranch, type RemoteFixture } from '../../test/git-remote.js';

/**
 * Claims by ref (claim-refs.ts, claim-ref-merge.ts) with boards made by the
 * core API in this process and a real bare remote: what a sync does with the
 * claim refs it fetches.
 */

let fixture: RemoteFixture | undefined;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = undefined;
});

async function setup(n: number): Promise<TaskStore[]> {
  fixture = await createRemote({ prefix: 'dotasks-claim-refs-' });
  return Array.from({ length: n }, (_, i) => TaskStore.init(join(fixture!.clone(`clone${i + 1}`), '.tasks')));
}

/** The claim refs on the remote: task → the claim they hold. */
function remoteClaims(): Map<number, Record<string, unknown>> {
  const listed = git(fixture!.bare, 'for-each-ref', '--format=%(objectname) %(refname)', 'refs/dotasks/claims/tasks/');
  const claims = new Map<number, Record<string, unknown>>();
  for (const line of listed.split('\n').filter(Boolean)) {
    const [commit, ref] = line.split(' ');
    claims.set(Number(/task_(\d+)$/.exec(ref)![1]), JSON.parse(git(fixture!.bare, 'show', `${commit}:claim.json`)) as Record<string, unknown>);
  }
  return claims;
}

describe('claims by ref', () => {
  it('a claim ref decides before the branch has it: another clone cannot claim the task, and its plain claim is withdrawn by its sync', async () => {
    const [a, b] = await setup(2);
    await a.createTask({ subject: 'one' });
    await syncBoard(a);
    await syncBoard(b);
    // a claims as a worker does: the ref only; the board branch gets the claim later.
    await claimWithSync(a, 1, { owner: 'agent-a', publish: 'later' });
    expect(remoteClaims().get(1)).toMatchObject({ task: 1, owner: 'agent-a' });
    expect(git(fixture!.bare, 'show', `tasks:${onBranch('task_1.json')}`)).toMatch(/"status": "pending"/);
    const lost = await claimWithSync(b, 1, { owner: 'agent-b' }).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(ClaimError);
    expect((lost as ClaimError).reason).toBe('already_claimed');
    expect(b.getTask(1)).toMatchObject({ status: 'pending', owner: '' });
    // A plain claim here, then a sync: the ref wins, the claim is withdrawn, and it never reaches the branch.
    await b.claimTask(1, { owner: 'agent-b' });
    const report = await syncBoard(b);
    expect(report.withdrawn).toEqual([{ id: 1, owner: 'agent-b', winner: 'agent-a' }]);
    expect(b.getTask(1)).toMatchObject({ status: 'pending', owner: '' });
    expect(remoteClaims().get(1)).toMatchObject({ owner: 'agent-a' });
    // a's sync puts its claim on the branch; a completion turns the ref into a marker in the same push.
    await syncBoard(a);
    expect(JSON.parse(git(fixture!.bare, 'show', `tasks:${onBranch('task_1.json')}`))).toMatchObject({ status: 'in_progress', owner: 'agent-a' });
    await a.completeTask(1, { actor: 'agent-a' });
    await syncBoard(a);
    expect(JSON.parse(git(fixture!.bare, 'show', `tasks:${onBranch('task_1.json')}`))).toMatchObject({ status: 'completed' });
    expect(remoteClaims().get(1)).toMatchObject({ owner: 'agent-a', closed: true });
  });

  it('a plain claim synced later gets its ref; a release deletes it; the branch claim of a clone without refs wins over a ref not yet on the branch', async () => {
    const [a, b, c] = await setup(3);
    await a.createTask({ subject: 'one' });
    await a.createTask({ subject: 'two' });
    for (const s of [a, b, c]) await syncBoard(s);
    await a.claimTask(1, { owner: 'agent-a' });
    await syncBoard(a);
    expect(remoteClaims().get(1)).toMatchObject({ owner: 'agent-a' });
    await a.releaseTask(1, { actor: 'agent-a', heldBy: 'agent-a' });
    await syncBoard(a);
    expect(remoteClaims().has(1)).toBe(false);
    // b claims #2 by ref only; c, a clone that knows only the branch, claims it on the branch first.
    await claimWithSync(b, 2, { owner: 'agent-b', publish: 'later' });
    await claimWithSync(c, 2, { owner: 'agent-c', via: 'branch' });
    expect(JSON.parse(git(fixture!.bare, 'show', `tasks:${onBranch('task_2.json')}`))).toMatchObject({ status: 'in_progress', owner: 'agent-c' });
    const report = await syncBoard(b);
    expect(report.withdrawn).toEqual([{ id: 2, owner: 'agent-b', winner: 'agent-c' }]);
    expect(remoteClaims().has(2)).toBe(false);
    expect(b.getTask(2)).toMatchObject({ status: 'in_progress', owner: 'agent-c' });
  });

  it("a claim's look that finds the branch where this clone left it merges nothing and waits for no board lock; a claim here that meets another clone's ref is still withdrawn by it", async () => {
    const [a, b] = await setup(2);
    writeFileSync(join(b.dir, 'config.json'), JSON.stringify({ lockTimeoutSeconds: 1 }) + '\n');
    const here = new TaskStore(b.dir);
    for (const subject of ['one', 'two', 'three']) await a.createTask({ subject });
    await syncBoard(a);
    await syncBoard(here);
    // a claims #1 by its ref alone (the branch does not move); b changed a task of its own meanwhile.
    await claimWithSync(a, 1, { owner: 'agent-a', publish: 'later' });
    await here.updateTask(3, { description: 'changed here' });
    // The look before a claim, while another command of b's board holds its lock (the board waits 1 s for it).
    let look: unknown;
    await here.transact({ board: true }, async () => {
      look = await syncBoard(new TaskStore(b.dir), { keepOut: true, memory: new SyncMemory() }).catch((error: unknown) => error);
    });
    expect(look).toMatchObject({ rounds: 1, incoming: [], withdrawn: [] });
    expect(here.getTask(3)).toMatchObject({ description: 'changed here' });
    // A plain claim here of the task a holds by ref: the look merges, and withdraws it.
    await here.claimTask(1, { owner: 'agent-b' });
    const report = await syncBoard(here, { keepOut: true });
    expect(report.withdrawn).toEqual([{ id: 1, owner: 'agent-b', winner: 'agent-a' }]);
    expect(here.getTask(1)).toMatchObject({ status: 'pending', owner: '' });
  });

  it("a claim's push says from the remote's listing alone whether another clone's claim is there: the same claim is up to date, another is taken", async () => {
    const [a] = await setup(1);
    await a.createTask({ subject: 'one' });
    await syncBoard(a);
    const claim = (owner: string) => ({ task: 1, owner, machine: 'm', claimedAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T00:15:00.000Z' });
    const [mine, theirs] = writeClaimCommits(a.dir, [
      { id: 1, text: JSON.stringify(claim('agent-a')) + '\n', claim: claim('agent-a') },
      { id: 1, text: JSON.stringify(claim('agent-b')) + '\n', claim: claim('agent-b') },
    ]);
    const run = (args: string[]) => gitAsync(a.dir, args);
    expect(await pushClaimRefs(run, 'origin', 'tasks', [{ id: 1, to: mine, expected: '' }])).toBe('accepted');
    // The ref is there with this very commit (another process of this clone pushed it): up to date, accepted.
    expect(await pushClaimRefs(run, 'origin', 'tasks', [{ id: 1, to: mine, expected: '' }])).toBe('accepted');
    // Another claim's commit: refused before anything is sent, and known to be another's without asking again.
    expect(await pushClaimRefs(run, 'origin', 'tasks', [{ id: 1, to: theirs, expected: '' }])).toBe('taken');
    expect(git(fixture!.bare, 'rev-parse', 'refs/dotasks/claims/tasks/task_1')).toBe(mine);
  });
});
